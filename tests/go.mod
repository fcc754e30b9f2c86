module tests

go 1.26.8

require (
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
