"""``python -m llama_index_pearl.cli`` is ``pearl``.

Pipeline step: cli (docs/architecture.md).
"""

import sys

from llama_index_pearl.cli import main

sys.exit(main())
