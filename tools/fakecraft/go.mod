module fakecraft

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/creack/pty v1.1.24
	github.com/gorilla/websocket v1.5.3
	github.com/stretchr/testify v1.12.1
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.49.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/yuin/gopher-lua => ../../third_party/gopher-lua
