module traposclient

go 1.26.8
