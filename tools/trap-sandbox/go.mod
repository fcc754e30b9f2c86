module trap-sandbox

go 1.26.8

require (
	github.com/alecthomas/kong v1.17.0
	github.com/google/uuid v1.6.0
	github.com/gorilla/websocket v1.5.3
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
)

require (
	github.com/prometheus/client_golang v1.25.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
