import sys

from gdcourse.cli import main

sys.exit(main())
