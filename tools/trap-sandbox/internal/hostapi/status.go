package hostapi

import (
	"net/http"
	"strings"

	"trap-sandbox/internal/protocol"
)

// StatusOf is the one code → HTTP status table of the host API (docs/http-api.md). A
// computer's own answer to /requests is 200 whatever its code; every other error, the
// gateway's or a file route's, gets the status of its code. fs_error splits by CC's message.
func StatusOf(e *protocol.Error) int {
	switch e.Code {
	case protocol.CodeNotConnected:
		return http.StatusNotFound
	case protocol.CodeTimeout:
		return http.StatusGatewayTimeout
	case protocol.CodeBusy:
		return http.StatusTooManyRequests
	case protocol.CodeForbidden:
		return http.StatusForbidden
	case protocol.CodeBadPayload:
		if e.Message == protocol.FrameTooLargeMessage {
			// Found once the payload's text was CC's bytes (a Latin-1 byte is two of UTF-8
			// then): the same answer as the route's own check before it.
			return http.StatusRequestEntityTooLarge
		}
		return http.StatusBadRequest
	case protocol.CodeUnknownType:
		return http.StatusNotImplemented
	case protocol.CodeUnauthorized:
		return http.StatusUnauthorized
	case protocol.CodeFSError:
		switch {
		case strings.HasSuffix(e.Message, "No such file"), strings.HasSuffix(e.Message, "Not a directory"):
			return http.StatusNotFound
		case strings.HasSuffix(e.Message, "Access denied"), strings.Contains(e.Message, ": Access denied ("): // /rom's says why after it
			return http.StatusForbidden
		case strings.HasSuffix(e.Message, "Out of space"), strings.Contains(e.Message, ": Out of space ("): // a write's says why after it
			return http.StatusInsufficientStorage
		}
		return http.StatusConflict
	case protocol.CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadGateway
}
