import sys

from deepresearch.cli import main

sys.exit(main())
