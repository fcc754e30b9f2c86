package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/server"
)

// HTTP API routes (docs/http-api.md).
const (
	// ComputersPath lists the connected computers.
	ComputersPath = "/trapos/computers"
	// RequestsPattern sends one gateway_request to a computer; {traposId} is path-escaped.
	RequestsPattern = "/trapos/computers/{traposId}/requests"
)

// Limits of the HTTP API.
const (
	// MaxRequestTimeout caps a request's timeoutMs, so a caller cannot park a goroutine for long.
	MaxRequestTimeout = 60 * time.Second
	// maxAPIBodyBytes bounds a request body: a frame may not exceed protocol.MaxFrameBytes, so
	// anything much bigger is refused without reading it all.
	maxAPIBodyBytes = 2 * protocol.MaxFrameBytes
	// probeMessageID has the length of the v4 UUID Request mints, for the size pre-check.
	probeMessageID = "00000000-0000-0000-0000-000000000000"
)

// ComputerJSON is one entry of GET /trapos/computers.
type ComputerJSON struct {
	AccountID      string    `json:"accountId"`
	TraposID       string    `json:"traposId"`
	ConnectedSince time.Time `json:"connectedSince"`
	RemoteAddr     string    `json:"remoteAddr"`
	LastFrameAt    time.Time `json:"lastFrameAt"`
	// Replica names the gateway replica that holds the socket (only with --nats).
	Replica string `json:"replica,omitempty"`
	// ClientVersion is the client's version from its hello; absent for an older client.
	ClientVersion string `json:"clientVersion,omitempty"`
}

// APIRequest is the body of POST /trapos/computers/{traposId}/requests.
type APIRequest struct {
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	TimeoutMs *int64          `json:"timeoutMs,omitempty"`
}

// APIResponse is the answer of POST /trapos/computers/{traposId}/requests: the computer's
// ok/payload/error, or the gateway's own error.
type APIResponse struct {
	OK      bool            `json:"ok"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Error   *protocol.Error `json:"error,omitempty"`
}

// mountAPI registers the host HTTP API behind the server's API auth check.
func (g *Gateway) mountAPI(routes *server.Routes) {
	routes.HandleAPIFunc("GET "+ComputersPath, g.serveComputers)
	routes.HandleAPIFunc("POST "+RequestsPattern, g.serveRequest)
}

func (g *Gateway) serveComputers(w http.ResponseWriter, _ *http.Request) {
	cs := g.Computers()
	out := make([]ComputerJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, ComputerJSON{AccountID: c.AccountID, TraposID: c.TraposID,
			ConnectedSince: c.ConnectedSince, RemoteAddr: c.RemoteAddr, LastFrameAt: c.LastFrameAt, Replica: c.Replica,
			ClientVersion: c.ClientVersion})
	}
	writeJSON(w, http.StatusOK, out)
}

func (g *Gateway) serveRequest(w http.ResponseWriter, r *http.Request) {
	traposID := r.PathValue("traposId")
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAPIBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeAPIError(w, http.StatusRequestEntityTooLarge, protocol.CodeInternal,
				fmt.Sprintf("the request body exceeds %d bytes; a frame may not exceed %d bytes (128 KiB)", maxAPIBodyBytes, protocol.MaxFrameBytes))
			return
		}
		writeAPIError(w, http.StatusBadRequest, protocol.CodeInternal, "cannot read the request body: "+err.Error())
		return
	}
	req, timeout, msg := parseAPIRequest(body, g.cfg.RequestTimeout)
	if msg != "" {
		writeAPIError(w, http.StatusBadRequest, protocol.CodeInternal, msg)
		return
	}
	payload, err := outboundPayload(req.Payload)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, protocol.CodeOf(err), strings.TrimPrefix(err.Error(), string(protocol.CodeOf(err))+": "))
		return
	}
	// Refuse an oversized frame before sending (and before looking the computer up).
	if _, err := protocol.EncodeFrame(protocol.Frame{Event: protocol.EventGatewayRequest, TraposReceiverID: traposID,
		MessageID: probeMessageID, Type: req.Type, Payload: payload}); errors.Is(err, protocol.ErrFrameTooLarge) {
		writeAPIError(w, http.StatusRequestEntityTooLarge, protocol.CodeInternal,
			fmt.Sprintf("the gateway_request frame would exceed %d bytes (128 KiB, CC: Tweaked's limit); send a smaller payload", protocol.MaxFrameBytes))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	resp, err := g.Request(ctx, LocalAccount, traposID, req.Type, payload)
	if err != nil {
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			pe = protocol.Errorf(protocol.CodeInternal, "request failed: %v", err)
		}
		writeAPIError(w, statusOf(pe.Code), pe.Code, pe.Message)
		return
	}
	out := APIResponse{OK: resp.OK, Error: resp.Error}
	if resp.OK {
		out.Payload = resp.Payload
		if len(out.Payload) == 0 {
			out.Payload = protocol.EmptyPayload
		}
	} else if out.Error == nil {
		out.Error = protocol.Errorf(protocol.CodeInternal, "the computer answered ok:false without an error")
	}
	writeJSON(w, http.StatusOK, out)
}

// parseAPIRequest validates a request body; msg is non-empty when it is unusable.
func parseAPIRequest(body []byte, defaultTimeout time.Duration) (req APIRequest, timeout time.Duration, msg string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		return req, 0, "the body must be a JSON object {\"type\":..., \"payload\":{...}, \"timeoutMs\":...}: " + err.Error()
	}
	if dec.More() {
		return req, 0, "the body must hold exactly one JSON object"
	}
	if req.Type == "" {
		return req, 0, "the body needs a non-empty \"type\""
	}
	timeout = defaultTimeout
	if req.TimeoutMs != nil {
		ms := *req.TimeoutMs
		if ms <= 0 || ms > MaxRequestTimeout.Milliseconds() {
			return req, 0, fmt.Sprintf("timeoutMs must be between 1 and %d, got %d", MaxRequestTimeout.Milliseconds(), ms)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	return req, timeout, ""
}

// statusOf maps a gateway-side error code to an HTTP status.
func statusOf(code protocol.Code) int {
	switch code {
	case protocol.CodeNotConnected:
		return http.StatusNotFound
	case protocol.CodeTimeout:
		return http.StatusGatewayTimeout
	case protocol.CodeBusy:
		return http.StatusTooManyRequests
	case protocol.CodeInternal:
		return http.StatusInternalServerError
	default:
		return http.StatusBadGateway
	}
}

// busyRetryAfter is the Retry-After of a busy answer, in seconds: requests in flight to a
// computer that reads end within its answer time, usually milliseconds.
const busyRetryAfter = "1"

func writeAPIError(w http.ResponseWriter, status int, code protocol.Code, message string) {
	if code == protocol.CodeBusy {
		w.Header().Set("Retry-After", busyRetryAfter)
	}
	writeJSON(w, status, APIResponse{OK: false, Error: &protocol.Error{Code: code, Message: message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
