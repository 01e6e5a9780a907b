"""``python -m llama_index_pearl.cli`` is ``pearl``."""

import sys

from llama_index_pearl.cli import main

sys.exit(main())
