"""``python -m xattn.torch_models``: see ``xattn.torch_models._cli``."""

import sys

from xattn.torch_models._cli import main

sys.exit(main())
