"""``python -m xattn.models``: see ``xattn.models._cli``."""

import sys

from xattn.models._cli import main

sys.exit(main())
