package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"

	"fakecraft/fsapi"
	"fakecraft/luakit"
)

// Error texts of http.request and response handles.
const (
	errBodyTooLarge     = "Request body is too large"
	errResponseTooLarge = "Response is too large"
	errBadMethod        = "Unsupported HTTP method"
)

// httpMethods are the methods CC accepts.
var httpMethods = map[string]bool{
	"GET": true, "POST": true, "HEAD": true, "OPTIONS": true,
	"PUT": true, "DELETE": true, "PATCH": true, "TRACE": true,
}

// luaRequest is the native http.request(url|options [, body [, headers [, binary]]]): it
// starts the request and returns true, or false and CC's message for a rejected URL.
func (a *API) luaRequest(L *lua.LState) int {
	rawURL, headers, timeout, ok := a.requestOptions(L, 3)
	if !ok {
		return 0
	}
	var body lua.LValue
	method, binary, redirect := "", false, true
	if opts, isTable := L.Get(1).(*lua.LTable); isTable {
		body = opts.RawGetString("body")
		if m, isString := opts.RawGetString("method").(lua.LString); isString {
			method = strings.ToUpper(string(m))
		}
		binary = lua.LVAsBool(opts.RawGetString("binary"))
		if r, isBool := opts.RawGetString("redirect").(lua.LBool); isBool {
			redirect = bool(r)
		}
	} else {
		body = L.Get(2)
		binary = lua.LVAsBool(L.Get(4))
	}
	if method != "" && !httpMethods[method] {
		L.RaiseError(errBadMethod)
		return 0
	}
	u, msg := parseHTTPURL(rawURL)
	if u == nil {
		L.Push(lua.LFalse)
		L.Push(lua.LString(msg))
		return 2
	}
	var payload []byte
	hasBody := false
	if s, isString := body.(lua.LString); isString {
		payload, hasBody = []byte(s), true
		if method == "" {
			method = http.MethodPost
		}
	}
	if method == "" {
		method = http.MethodGet
	}
	parsed := *u
	parsed.Opaque = "" // String() would drop the host for it; the request keeps u itself
	req, err := http.NewRequestWithContext(a.ctx, method, parsed.String(), bytes.NewReader(payload))
	if err != nil {
		L.Push(lua.LFalse)
		L.Push(lua.LString(msgURLMalformed))
		return 2
	}
	req.URL = u
	if !hasBody {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for name, values := range headers {
		for i, v := range values {
			values[i] = unfold(v)
		}
		req.Header[name] = values
	}
	// CC's defaults (HttpRequest and HttpRequestHandler): a body gets a form Content-Type,
	// every request an Accept-Charset, unless the program set them.
	if hasBody {
		setDefaultHeader(req.Header, "Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}
	tooLarge := uploadSize(req.Header, hasBody, len(payload)) > maxUpload
	replaceOwnHeaders(req.Header)
	setDefaultHeader(req.Header, "Accept-Charset", "UTF-8")
	redirects := 0
	if redirect {
		redirects = maxRedirects
	}
	a.h.Go(func() {
		if tooLarge {
			a.refuseUpload(rawURL, u.Hostname())
			return
		}
		a.doRequest(rawURL, req, hasBody, payload, timeout, redirects, binary)
	})
	L.Push(lua.LTrue)
	return 1
}

// uploadSize is what CC counts against max_upload (HttpRequest.getHeaderSize plus the
// body): each header's name, value and one more byte, over the headers it has when it
// checks: the program's, the User-Agent, and with a body the Content-Type and
// Content-Length unless the program set them (not Accept-Charset, added later).
func uploadSize(h http.Header, hasBody bool, bodyLen int) int {
	size := bodyLen
	for name, values := range h {
		for _, v := range values {
			size += len(name) + len(v) + 1
		}
	}
	if hasBody && !hasHeader(h, "Content-Length") {
		size += len("Content-Length") + len(strconv.Itoa(bodyLen)) + 1
	}
	return size
}

// replaceOwnHeaders leaves out the program's headers that CC replaces by its own, which
// Go's client would send beside its own: Host and Connection (CC sets both), and a
// Content-Length not spelled as Go writes its own, the body's. Go's client also writes its
// own User-Agent unless the header has the canonical name, so when the program spelled
// that name its own way an empty canonical one keeps Go's out.
func replaceOwnHeaders(h http.Header) {
	for name := range h {
		if strings.EqualFold(name, "Host") || strings.EqualFold(name, "Connection") ||
			strings.EqualFold(name, "Content-Length") && name != "Content-Length" {
			delete(h, name)
		}
	}
	if _, ok := h["User-Agent"]; !ok {
		h["User-Agent"] = []string{""}
	}
}

// refuseUpload is CC's answer to a request over max_upload: http.request has returned
// true, and once the host passed the address rules (which answer first) http_failure says
// "Request body is too large".
func (a *API) refuseUpload(rawURL, host string) {
	if _, err := a.resolve(a.ctx, host); err != nil {
		if !errors.Is(err, context.Canceled) {
			a.queueHTTPFailure(rawURL, friendlyDialError(err))
		}
		return
	}
	a.queueHTTPFailure(rawURL, errBodyTooLarge)
}

// doRequest performs one request and queues http_success or http_failure. It follows up
// to redirects redirects as CC does, not as Go's client would: every hop sends the same
// headers and body, only a 303 turns the method into GET, and a 3xx it does not follow
// (308, the same URL again, one past the limit) is the response.
func (a *API) doRequest(rawURL string, req *http.Request, hasBody bool, payload []byte, timeout time.Duration, redirects int, binary bool) {
	ctx, cancel := context.WithCancel(withRequestTimeout(a.ctx, timeout))
	defer cancel()
	transport := &http.Transport{
		DialContext:       a.dialWire,
		DialTLSContext:    a.dialWireTLS,
		DisableKeepAlives: true,
		// CC asks for no compression: Go's transport would add Accept-Encoding: gzip.
		DisableCompression: true,
		Proxy:              nil,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // doRequest follows them itself
		},
	}
	// The last connection is the final hop's, whose header block has the names as sent.
	var mu sync.Mutex
	var last net.Conn
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		mu.Lock()
		last = info.Conn
		mu.Unlock()
	}})
	hop := req.WithContext(ctx)
	var resp *http.Response
	for {
		var err error
		resp, err = client.Do(hop)
		if err != nil {
			a.queueHTTPFailure(rawURL, friendlyDialError(err))
			return
		}
		next := redirectTarget(hop.URL, resp)
		if next == nil || redirects == 0 {
			break
		}
		redirects--
		_ = resp.Body.Close()
		if _, msg := parseHTTPURL(next.String()); msg != "" {
			a.queueHTTPFailure(rawURL, msg)
			return
		}
		method := hop.Method
		if resp.StatusCode == http.StatusSeeOther {
			method = http.MethodGet
		}
		hop = nextHop(ctx, hop, next, method, hasBody, payload)
	}
	defer func() { _ = resp.Body.Close() }()
	// CC's limit applies to the body as the program gets it: decoded.
	body, decoded := decompressed(resp.Header, resp.Body)
	data, err := io.ReadAll(io.LimitReader(body, maxDownload+1))
	if err != nil {
		a.queueHTTPFailure(rawURL, friendlyDialError(err))
		return
	}
	if len(data) > maxDownload {
		a.queueHTTPFailure(rawURL, errResponseTooLarge)
		return
	}
	if !a.wait(nil) {
		return
	}
	mu.Lock()
	wire, _ := last.(*wireConn)
	mu.Unlock()
	r := &response{
		body:    data,
		code:    resp.StatusCode,
		message: strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode))),
		headers: ccResponseHeaders(responseHeaders(wire, resp.Header), decoded, len(data)),
		binary:  binary,
	}
	a.h.Do(func(L *lua.LState) {
		handle := r.handle(L)
		if r.code >= 200 && r.code < 400 {
			a.h.QueueEvent("http_success", lua.LString(rawURL), handle)
		} else {
			a.h.QueueEvent("http_failure", lua.LString(rawURL), lua.LString(r.message), handle)
		}
	})
}

// redirectTarget is where resp sends the request next, or nil: CC follows 300-307 but
// 304 and 306 with a Location it can resolve against from, and not to from itself.
func redirectTarget(from *url.URL, resp *http.Response) *url.URL {
	code := resp.StatusCode
	if code < 300 || code > 307 || code == http.StatusNotModified || code == 306 {
		return nil
	}
	location := resp.Header.Get("Location")
	if location == "" {
		return nil
	}
	base := *from
	base.Opaque = "" // parseText's written path: resolve against the parsed one
	next, err := base.Parse(location)
	if err != nil || sameURL(&base, next) {
		return nil
	}
	return next
}

// sameURL compares two URLs as Java's URI.equals does, scheme and host without case.
func sameURL(a, b *url.URL) bool {
	x, y := *a, *b
	x.Opaque, y.Opaque = "", ""
	x.Scheme, y.Scheme = strings.ToLower(x.Scheme), strings.ToLower(y.Scheme)
	x.Host, y.Host = strings.ToLower(x.Host), strings.ToLower(y.Host)
	return x.String() == y.String()
}

// nextHop is the request of a redirect: prev's headers and the same body again, as CC
// re-sends its buffer on every hop.
func nextHop(ctx context.Context, prev *http.Request, to *url.URL, method string, hasBody bool, payload []byte) *http.Request {
	next := prev.Clone(ctx)
	next.URL, next.Host, next.Method = to, "", method
	next.Body, next.GetBody, next.ContentLength = http.NoBody, nil, 0
	if hasBody {
		next.Body, next.ContentLength = io.NopCloser(bytes.NewReader(payload)), int64(len(payload))
	}
	return next
}

// setDefaultHeader sets name to value unless the header has it under any spelling (the
// program's spelling of a name is kept, so the map may hold non-canonical keys).
func setDefaultHeader(h http.Header, name, value string) {
	if !hasHeader(h, name) {
		h[name] = []string{value}
	}
}

// hasHeader reports whether h has name under any spelling.
func hasHeader(h http.Header, name string) bool {
	_, ok := headerValue(h, name)
	return ok
}

// headerValue is the first value of name under any spelling, and whether h has it.
func headerValue(h http.Header, name string) (string, bool) {
	for key, values := range h {
		if strings.EqualFold(key, name) && len(values) > 0 {
			return values[0], true
		}
	}
	return "", false
}

// queueHTTPFailure queues http_failure(url, msg) without a response.
func (a *API) queueHTTPFailure(rawURL, msg string) {
	if a.wait(nil) {
		a.h.QueueEvent("http_failure", lua.LString(rawURL), lua.LString(msg))
	}
}

// checkedDial opens the TCP connection of one hop after the address rules allowed its
// host: dialWire and dialWireTLS start with it, so the rules apply to every hop,
// redirects included.
func (a *API) checkedDial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("split %s: %w", address, err)
	}
	addr, err := a.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	return a.dial(ctx, addr, port)
}

// luaCheckURL is the native http.checkURL(url): false and a message for a URL it rejects
// at once, otherwise true and an http_check event later.
func (a *API) luaCheckURL(L *lua.LState) int {
	rawURL := lua.LVAsString(L.Get(1))
	u, msg := parseHTTPURL(rawURL)
	if u == nil {
		L.Push(lua.LFalse)
		L.Push(lua.LString(msg))
		return 2
	}
	a.h.Go(func() {
		_, err := a.resolve(a.ctx, u.Hostname())
		if errors.Is(err, context.Canceled) || !a.wait(nil) {
			return
		}
		if err != nil {
			a.h.QueueEvent("http_check", lua.LString(rawURL), lua.LFalse, lua.LString(friendlyDialError(err)))
			return
		}
		a.h.QueueEvent("http_check", lua.LString(rawURL), lua.LTrue)
	})
	L.Push(lua.LTrue)
	return 1
}

// response is what a received HTTP response adds to CC's read handle over its body: the
// status and the headers, which (like CC's) stay readable after the body is closed.
type response struct {
	body    []byte
	code    int
	message string
	headers map[string]string
	binary  bool
}

// responseHeaders is CC's header table: the names as the server sent them when the
// connection recorded its header block, else Go's canonical names; the values of a name
// sent more than once are joined with ",", as CC does.
func responseHeaders(wire *wireConn, canonical http.Header) map[string]string {
	if wire != nil {
		if h := wire.headers(); h != nil {
			return h
		}
	}
	out := make(map[string]string, len(canonical))
	for name, values := range canonical {
		out[name] = strings.Join(values, ",")
	}
	return out
}

// handle builds the Lua response handle: fs's read handle on the body (text or binary, as
// CC's HttpResponseHandle wraps its ReadHandle) plus getResponseCode and
// getResponseHeaders. Lua goroutine only; the methods are called with a dot, like every CC
// handle.
func (r *response) handle(L *lua.LState) *lua.LTable {
	t := fsapi.ReadHandle(L, r.body, r.binary)
	t.RawSetString("getResponseCode", L.NewFunction(r.luaCode))
	t.RawSetString("getResponseHeaders", L.NewFunction(r.luaHeaders))
	return t
}

func (r *response) luaCode(L *lua.LState) int {
	L.Push(lua.LNumber(r.code))
	L.Push(lua.LString(r.message))
	return 2
}

// luaHeaders returns a new table each call, as CC does, made as CC makes it of the HashMap
// its HttpRequestHandler fills (luakit.JavaMap), so pairs walks the names in CC's order,
// which their Java hashes decide. Names that share a bucket of that map come in the order
// the server sent them in CC; fakecraft keeps no such order and puts them in their names'.
func (r *response) luaHeaders(L *lua.LState) int {
	names := make([]string, 0, len(r.headers))
	for name := range r.headers {
		names = append(names, name)
	}
	sort.Strings(names)
	entries := make([]luakit.MapEntry, len(names))
	for i, name := range names {
		entries[i] = luakit.MapEntry{Key: name, Value: lua.LString(r.headers[name])}
	}
	L.Push(luakit.JavaMap(L, luakit.JavaDefaultCapacity, entries...))
	return 1
}
