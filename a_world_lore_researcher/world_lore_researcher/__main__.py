from world_lore_researcher.cli import main

main()
