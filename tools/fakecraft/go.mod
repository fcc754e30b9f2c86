module fakecraft

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	github.com/yuin/gopher-lua v1.1.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
