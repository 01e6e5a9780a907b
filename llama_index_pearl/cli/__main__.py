"""``python -m llama_index_pearl.cli`` is ``pearl``.

Pipeline step: CLI (docs/architecture.md).
"""

import sys

from llama_index_pearl.cli import main

sys.exit(main())
