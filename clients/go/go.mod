module coinkeep

go 1.18
