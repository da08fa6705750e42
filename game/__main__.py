from game.main import main

raise SystemExit(main())
