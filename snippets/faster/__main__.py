from faster.benchmark import main

main()
