package httpapi

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
)

func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Header().Set("X-Test", "yes")
			_, _ = io.WriteString(w, "line1\nline2\n"+r.Header.Get("User-Agent"))
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			_, _ = io.WriteString(w, r.Method+":"+string(body)+r.Header.Get("Referer"))
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/r301", "/r302", "/r303", "/r307", "/r308":
			code, _ := strconv.Atoi(r.URL.Path[2:])
			http.Redirect(w, r, "/echo", code)
		case "/stall": // the headers and some of the body, then nothing until the client goes
			_, _ = io.WriteString(w, "part")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/self":
			http.Redirect(w, r, "/self", http.StatusFound)
		case "/chain":
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			w.Header().Set("Location", fmt.Sprintf("/chain?n=%d", n+1))
			w.WriteHeader(http.StatusFound)
			_, _ = fmt.Fprint(w, n)
		case "/toftp":
			http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
		case "/headers":
			_, _ = io.WriteString(w, fmt.Sprintf("ct=%q ac=%q ae=%q", r.Header.Values("Content-Type"),
				r.Header.Values("Accept-Charset"), r.Header.Values("Accept-Encoding")))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, "missing")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPGet(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local h = assert(http.get(base .. "/ok"))
		local code, msg = h.getResponseCode()
		local headers = h.getResponseHeaders()
		local l1 = h.readLine()
		local l2 = h.readLine(true)
		local rest = h.readAll()
		h.close()
		local ok, err = pcall(h.readAll)
		return code, msg, headers["X-Test"], l1, l2, rest, ok
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LNumber(200), lua.LString("OK"), lua.LString("yes"),
		lua.LString("line1"), lua.LString("line2\n"), lua.LString(DefaultUserAgent), lua.LFalse}, out)
}

func TestHTTPErrorStatusAndPost(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local h, err, resp = http.get(base .. "/nope")
		local body = resp.readAll()
		local code = resp.getResponseCode()
		local p = assert(http.post(base .. "/echo", "data"))
		local r = assert(http.get(base .. "/redirect"))
		local nr = assert(http.get({ url = base .. "/redirect", redirect = false }))
		return tostring(h), err, body, code, p.readAll(), r.readLine(), (nr.getResponseCode())
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("nil"), lua.LString("Not Found"), lua.LString("missing"), lua.LNumber(404),
		lua.LString("POST:data"), lua.LString("line1"), lua.LNumber(302)}, out)
}

// CC sends Accept-Charset: UTF-8, a form Content-Type with a body, and no Accept-Encoding,
// unless the program set them (HttpRequest, HttpRequestHandler.channelActive).
func TestHTTPRequestHeadersLikeCC(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local function body(h) local s = h.readAll() h.close() return s end
		return body(assert(http.get(base .. "/headers"))),
			body(assert(http.post(base .. "/headers", ""))),
			body(assert(http.post(base .. "/headers", "a=1", { ["content-type"] = "application/json", ["accept-charset"] = "latin1" })))
	`, srv.URL)
	assert.Equal(t, []lua.LValue{
		lua.LString(`ct=[] ac=["UTF-8"] ae=[]`),
		lua.LString(`ct=["application/x-www-form-urlencoded; charset=utf-8"] ac=["UTF-8"] ae=[]`),
		lua.LString(`ct=["application/json"] ac=["latin1"] ae=[]`),
	}, out)
}

// Redirects follow CC's rules (HttpRequestHandler), not Go's client's: 301 and 302 keep
// the method and the body, a 303 re-sends the body with GET, 308 and a redirect to the
// same URL are not followed, the 17th redirect is the response, and no Referer is sent.
func TestHTTPRedirectsLikeCC(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local function body(h) local s = h.readAll() h.close() return s end
		local function code(h) local c = h.getResponseCode() h.close() return c end
		local chain = assert(http.get(base .. "/chain?n=0"))
		local _, ftpErr = http.get(base .. "/toftp")
		return body(assert(http.post(base .. "/r301", "x"))), body(assert(http.post(base .. "/r302", "x"))),
			body(assert(http.post(base .. "/r303", "x"))), body(assert(http.post(base .. "/r307", "x"))),
			code(assert(http.post(base .. "/r308", "x"))), code(assert(http.get(base .. "/self"))),
			chain.getResponseCode(), chain.readAll(), ftpErr
	`, srv.URL)
	assert.Equal(t, []lua.LValue{
		lua.LString("POST:x"), lua.LString("POST:x"), lua.LString("GET:x"), lua.LString("POST:x"),
		lua.LNumber(308), lua.LNumber(302), lua.LNumber(302), lua.LString("16"), lua.LString("Invalid protocol 'ftp'"),
	}, out)
}

// CC's request timeout bounds the connect and each read (Netty's ReadTimeoutHandler), and
// 0 means none: it never failed a request at once with "Timed out".
func TestHTTPTimeoutLikeCC(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local h, err = http.get({ url = base .. "/ok", timeout = 0 })
		local s, serr = http.get({ url = base .. "/stall", timeout = 0.2 })
		return h and h.readLine() or err, tostring(s), serr
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("line1"), lua.LString("nil"), lua.LString("Timed out")}, out)
}

// A URL's bytes past ASCII go out as CC sends them: each byte is the character of that code
// point (Java's string), written as UTF-8 in the path and the query alike (Netty); bytes
// 0x80-0xA0, controls and a space to Java, make the URL malformed.
func TestHTTPURLBytesAsCCSendsThem(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.RequestURI)
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local h = assert(http.get(base .. "/k\252che?q=k\252che"))
		local _, err = http.get(base .. "/k\160")
		return h.readAll(), err
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("/k\u00fcche?q=k\u00fcche"), lua.LString("URL malformed")}, out)
}

func TestHTTPRequestAsyncAndFailures(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true, Resolver: fakeResolver{}})
	out := c.run(t, `
		local base = ...
		local ok = http.request(base .. "/ok")
		local event, url, h = os.pullEvent("http_success")
		local ok2, err2 = http.request("ftp://example.com/")
		local fevent, furl, ferr = os.pullEvent("http_failure")
		local nh, nerr = http.get("http://nowhere.test/")
		return ok, url == base .. "/ok", ok2, err2, furl, ferr, nerr
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LTrue, lua.LTrue, lua.LFalse, lua.LString("Invalid protocol 'ftp'"),
		lua.LString("ftp://example.com/"), lua.LString("Invalid protocol 'ftp'"), lua.LString("Unknown host")}, out)
}

func TestHTTPDefaultRulesDenyLoopback(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{Resolver: fakeResolver{"localhost": "127.0.0.1"}})
	out := c.run(t, `
		local base = ...
		local h, err = http.get(base .. "/ok")
		return tostring(h), err
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("nil"), lua.LString("Domain not permitted")}, out)
}

func TestCheckURL(t *testing.T) {
	c := newComputer(t, Options{Resolver: fakeResolver{"localhost": "127.0.0.1", "public.test": "93.184.216.34"}})
	out := c.run(t, `
		local r = {}
		local function add(a, b) r[#r + 1] = tostring(a) .. "|" .. tostring(b) end
		add(http.checkURL("ws://example.com/"))
		add(http.checkURL("example.com"))
		add(http.checkURL("http://localhost:8080/"))
		add(http.checkURL("http://public.test/"))
		add(http.checkURLAsync("http://localhost/"))
		local _, url, ok, err = os.pullEvent("http_check")
		add(url, ok)
		add(err)
		return unpack(r)
	`)
	assert.Equal(t, []lua.LValue{
		lua.LString("false|Invalid protocol 'ws'"),
		lua.LString("false|Must specify http or https"),
		lua.LString("false|Domain not permitted"),
		lua.LString("true|nil"),
		lua.LString("true|nil"),
		lua.LString("http://localhost/|false"),
		lua.LString("Domain not permitted|nil"),
	}, out)
}

func TestHTTPArgumentChecks(t *testing.T) {
	c := newComputer(t, Options{})
	out := c.run(t, `
		local r = {}
		local function try(...) local ok, err = pcall(...) r[#r + 1] = ok and "ok" or err end
		try(http.get)
		try(http.post, "http://example.com")
		try(http.request, { url = "http://example.com", method = "FETCH" })
		try(http.checkURL, 1)
		return unpack(r)
	`)
	require.Len(t, out, 4)
	assert.True(t, strings.HasSuffix(lstr(out[0]), "bad argument #1 (string expected, got nil)"), lstr(out[0]))
	assert.True(t, strings.HasSuffix(lstr(out[1]), "bad argument #2 (string expected, got nil)"), lstr(out[1]))
	assert.True(t, strings.HasSuffix(lstr(out[2]), "Unsupported HTTP method"), lstr(out[2]))
	assert.True(t, strings.HasSuffix(lstr(out[3]), "bad argument #1 (string expected, got number)"), lstr(out[3]))
}

// TestHTTPBodiesAreBytes: CC hands a request body to the network as its bytes (both call
// forms) and a response body to Lua as the bytes received, in text mode too: nothing is
// decoded or re-encoded, so Latin-1 and invalid UTF-8 cross unchanged.
func TestHTTPBodiesAreBytes(t *testing.T) {
	const payload = "k\xfcche \xff\x00\xe2\x82"
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- string(body)
		w.Header().Set("X-Echo", r.Header.Get("X-Name"))
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local url, payload = ...
		local h = assert(http.post(url, payload, { ["X-Name"] = "\252" }))
		local first, rest, header = h.read(), h.readAll(), h.getResponseHeaders()["X-Echo"]
		h.close()
		local t = assert(http.post({ url = url, body = payload }))
		local all = t.readAll()
		t.close()
		return first, rest, header, all
	`, srv.URL, payload)
	assert.Equal(t, payload, recv(t, got), "positional body")
	assert.Equal(t, payload, recv(t, got), "table body")
	assert.Equal(t, []lua.LValue{lua.LString("k"), lua.LString(payload[1:]), lua.LString("\xfc"),
		lua.LString(payload)}, out)
}

// A response handle's read takes a count as CC's Java API does: a finite number, "nil" or
// nothing; a count past the end reads the rest.
func TestResponseReadCount(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local h = assert(http.get(...))
		local r = {}
		local function try(...) local ok, err = pcall(...) r[#r + 1] = ok and tostring(err) or err end
		try(h.read, 0/0)
		try(h.read, "2")
		try(h.read, 1)
		try(h.read, 2^63)
		h.close()
		return unpack(r)
	`, srv.URL)
	assert.Equal(t, []lua.LValue{
		// placed at the line calling pcall (try's), as CC places a Java function's error
		lua.LString("<string>:4: bad argument #1 (number expected, got nan)"),
		lua.LString("<string>:4: bad argument #1 (number expected, got string)"),
		lua.LString("h"),
		lua.LString("ello"),
	}, out)
}

// TestResponseIsAReadHandle: as in CC, a response is fs's read handle on the body (seek,
// readLine dropping "\r\n" but keeping a lone "\r", text or binary read) whose
// getResponseCode and getResponseHeaders keep answering after close.
func TestResponseIsAReadHandle(t *testing.T) {
	const body = "a\r\nb\rc\r\nlast\r"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Test", "yes")
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	tests := []struct {
		name, code string
		want       []string
	}{
		{"readLine drops \\r\\n, keeps a lone \\r", `local h = assert(http.get(base))
			return h.readLine(), h.readLine(true), h.readLine(), h.readLine()`,
			[]string{"a", "b\rc\r\n", "last\r", "nil"}},
		{"seek", `local h = assert(http.get(base))
			return h.seek("set", 1), h.read(), h.seek("end"), h.seek("cur", -5), h.readAll(), h.seek("set", -1)`,
			[]string{"1", "\r", "13", "8", "last\r", "nil", "Position is negative"}},
		{"status and headers after close", `local h = assert(http.get(base))
			h.close()
			local ok, err = pcall(h.readAll)
			local code, msg = h.getResponseCode()
			return ok, err, code, msg, h.getResponseHeaders()["X-Test"]`,
			[]string{"false", "<string>:3: attempt to use a closed file", "200", "OK", "yes"}},
		{"failure response after close", `local _, _, h = http.get(base .. "/missing")
			h.close()
			return h.getResponseCode()`,
			[]string{"404", "Not Found"}},
		{"binary read", `local h = assert(http.get({ url = base, binary = true }))
			return h.read(), h.read(2)`,
			[]string{"97", "\r\n"}},
		{"text read", `local h = assert(http.get(base))
			return h.read(), h.read(2)`,
			[]string{"a", "\r\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := c.run(t, "local base = ... "+tc.code, srv.URL)
			got := make([]string, len(out))
			for i, v := range out {
				got[i] = lstr(v)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestResponseHeaderNamesAsSent: as CC's Netty, getResponseHeaders keeps each name in the
// case the server sent (Go's client would canonicalise it), joins a name's repeated values
// with ",", and holds the final response's headers only: not an interim 1xx's, not a
// redirect's. Over TLS too.
func TestResponseHeaderNamesAsSent(t *testing.T) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			w.Header()["x-hop"] = []string{"1"}
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		w.Header()["x-interim"] = []string{"1"}
		w.WriteHeader(http.StatusEarlyHints)
		delete(w.Header(), "x-interim")
		w.Header()["x-lower"] = []string{"yes"}
		w.Header()["X-Dup"] = []string{"a", "b"}
		w.Header()["x-dup"] = []string{"c"}
		_, _ = io.WriteString(w, "body")
	})
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(handler)
	t.Cleanup(secure.Close)
	tlsConfig := secure.Client().Transport.(*http.Transport).TLSClientConfig
	c := newComputer(t, Options{AllowPrivate: true, TLSConfig: tlsConfig})
	for _, base := range []string{plain.URL, secure.URL} {
		out := c.run(t, `
			local base = ...
			local h = assert(http.get(base .. "/hop"))
			local names = {}
			for name, value in pairs(h.getResponseHeaders()) do
				if name:sub(1, 2):lower() == "x-" then names[#names + 1] = name .. "=" .. value end
			end
			table.sort(names)
			return h.readAll(), table.concat(names, " ")
		`, base)
		assert.Equal(t, []lua.LValue{lua.LString("body"), lua.LString("X-Dup=a,b x-dup=c x-lower=yes")}, out, base)
	}
}

// TestResponseHeadersWalkAsCCs: CC hands the headers over as a HashMap, copied into a new
// table in the map's iteration order, so pairs walks them in an order the names' Java
// hashes decide: the one Java's HashMap and Cobalt give these names (none sharing a bucket,
// where the order the server sent them would count in CC).
func TestResponseHeadersWalkAsCCs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["x-alpha"] = []string{"1"}
		w.Header()["X-Side"] = []string{"2"}
		w.Header()["x-gamma"] = []string{"3"}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "body")
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local h = assert(http.get(...))
		local names = {}
		for name in pairs(h.getResponseHeaders()) do names[#names + 1] = name end
		return table.concat(names, " ")
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("Connection X-Side Content-Type content-length x-gamma Date x-alpha")}, out)
}

// compressed is body in the given Content-Encoding: gzip, zlib ("deflate") or a bare
// deflate stream ("raw").
func compressed(t *testing.T, encoding, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch encoding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "raw":
		fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
		require.NoError(t, err)
		w = fw
	}
	_, err := io.WriteString(w, body)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// TestHTTPDecodesCompressedResponsesLikeCC: CC's pipeline (Netty's HttpContentDecompressor)
// decodes a gzip or deflate body (zlib or bare, x- names, any case) even though it never
// asks for one; the table then has no Content-Encoding, and a Content-Length becomes
// transfer-encoding: chunked. Other encodings come as sent; a body that does not decode
// fails with "Could not connect"; an empty one (HEAD) is empty.
func TestHTTPDecodesCompressedResponsesLikeCC(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoding := r.URL.Query().Get("as")
		var data []byte
		switch encoding {
		case "gzip", "deflate", "raw":
			data = compressed(t, encoding, "hello "+encoding)
		case "bad":
			data = []byte("not gzip at all")
		default:
			data = []byte("as sent")
		}
		sent := map[string]string{"raw": "deflate", "bad": "gzip", "xgzip": "gzip"}[encoding]
		if sent == "" {
			sent = encoding
		}
		w.Header()["Content-Encoding"] = []string{r.URL.Query().Get("name")}
		if r.URL.Query().Get("name") == "" {
			w.Header()["Content-Encoding"] = []string{sent}
		}
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Get("chunked") != "" {
			w.(http.Flusher).Flush() // no Content-Length: the body goes chunked
		} else {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		}
		if r.Method != http.MethodHead {
			_, _ = w.Write(data)
		}
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local out = {}
		local function fetch(query, method)
			assert(http.request({ url = base .. "/?" .. query, method = method }))
			local event, _, h = os.pullEvent()
			while event ~= "http_success" and event ~= "http_failure" do event, _, h = os.pullEvent() end
			if event == "http_failure" then out[#out + 1] = "failure: " .. h return end
			local names = {}
			for name, value in pairs(h.getResponseHeaders()) do
				if name ~= "Date" and name ~= "Connection" then names[#names + 1] = name .. "=" .. value end
			end
			table.sort(names)
			out[#out + 1] = h.readAll() .. " | " .. table.concat(names, " ")
		end
		fetch("as=gzip")
		fetch("as=deflate")
		fetch("as=raw")
		fetch("as=gzip&name=%20X-GZIP%20&chunked=1")
		fetch("as=br")
		fetch("as=bad")
		fetch("as=gzip", "HEAD")
		return table.concat(out, "\n")
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString(strings.Join([]string{
		"hello gzip | Content-Type=text/plain transfer-encoding=chunked",
		"hello deflate | Content-Type=text/plain transfer-encoding=chunked",
		"hello raw | Content-Type=text/plain transfer-encoding=chunked",
		"hello gzip | Content-Type=text/plain Transfer-Encoding=chunked",
		"as sent | Content-Encoding=br Content-Type=text/plain content-length=7",
		"failure: Could not connect",
		" | Content-Type=text/plain transfer-encoding=chunked",
	}, "\n"))}, out)
}

// TestHTTPContentLengthIsTheBodyRead: CC's handler replaces a Content-Length with the
// length of the body it read, under Netty's lower-case name: a HEAD response's is 0.
func TestHTTPContentLengthIsTheBodyRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		if r.Method != http.MethodHead {
			_, _ = io.WriteString(w, "hello")
		}
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local function lengths(method)
			assert(http.request({ url = base, method = method }))
			local _, _, h = os.pullEvent("http_success")
			local headers = h.getResponseHeaders()
			return tostring(headers["content-length"]) .. "/" .. tostring(headers["Content-Length"])
		end
		return lengths("GET"), lengths("HEAD")
	`, srv.URL)
	assert.Equal(t, []lua.LValue{lua.LString("5/nil"), lua.LString("0/nil")}, out)
}

// TestHTTPUploadLimitLikeCC: CC counts the headers it has then (the program's, User-Agent,
// Content-Type, Content-Length: name, value and one byte each) with the body against
// max_upload. http.request returns true either way; over the limit, http_failure says
// "Request body is too large" once the address rules passed (a denied host says so first).
func TestHTTPUploadLimitLikeCC(t *testing.T) {
	srv := httpServer(t)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base, limit, agent = ...
		local ct = "application/x-www-form-urlencoded; charset=utf-8"
		-- 115 bytes of headers: 10+21+1, 12+48+1, 14+7+1
		local headers = #"User-Agent" + #agent + 1 + #"Content-Type" + #ct + 1 + #"Content-Length" + 7 + 1
		local function post(url, size)
			local ok = http.request(url, ("x"):rep(size))
			local event, _, arg = os.pullEvent()
			while event ~= "http_success" and event ~= "http_failure" do event, _, arg = os.pullEvent() end
			if event == "http_success" then return tostring(ok) .. " " .. #arg.readAll() end
			return tostring(ok) .. " " .. arg
		end
		local fits = tonumber(limit) - headers
		return post(base .. "/echo", fits), post(base .. "/echo", fits + 1)
	`, srv.URL, strconv.Itoa(maxUpload), DefaultUserAgent)
	assert.Equal(t, []lua.LValue{lua.LString("true " + strconv.Itoa(maxUpload-115+len("POST:"))),
		lua.LString("true " + errBodyTooLarge)}, out)

	denied := newComputer(t, Options{})
	out = denied.run(t, `
		local ok, err = http.request(..., ("x"):rep(4194305))
		local _, _, msg = os.pullEvent("http_failure")
		return ok, err, msg
	`, srv.URL+"/echo")
	assert.Equal(t, []lua.LValue{lua.LTrue, lua.LNil, lua.LString(msgDomainNotPermitted)}, out)
}

// TestRequestHeaderErrorsLikeCC: a header CC's Netty refuses raises its message at the
// call (for http.request and websockets alike, before the timeout is checked): a bad value
// names the header, a bad name the character; pairs that are not two strings are skipped,
// and a value folded over lines (CR LF or LF, then a space or tab) is taken.
func TestRequestHeaderErrorsLikeCC(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fold" {
			got <- fmt.Sprintf("%q", r.Header.Values("X-Fold"))
		}
	}))
	t.Cleanup(srv.Close)
	c := newComputer(t, Options{AllowPrivate: true})
	out := c.run(t, `
		local base = ...
		local r = {}
		local function try(f, ...)
			local ok, err = pcall(f, ...)
			r[#r + 1] = ok and "ok" or err
		end
		local function req(headers) try(http.request, base .. "/none", nil, headers) end
		req({ "x", a = 2, [3] = "y", b = true })
		req({ ["X-A"] = "a\nb" })
		req({ ["X-A"] = "a\0b" })
		req({ ["X-A"] = "a\r" })
		req({ ["X-A"] = "a\rb" })
		req({ ["X A"] = "v" })
		req({ ["X\tA"] = "v" })
		req({ ["X\233"] = "v" })
		req({ [""] = "v" })
		req({ [""] = "a\n" })
		try(http.request, { url = base, headers = { ["X;"] = "v" }, timeout = -1 })
		try(http.websocketAsync, "ws://example.com", { ["X=A"] = "v" })
		try(http.request, base .. "/fold", nil, { ["X-Fold"] = "a\r\n b\n\tc" })
		return table.concat(r, "\n")
	`, srv.URL)
	want := []string{
		"ok",
		"Failed to convert object value for header 'X-A'",
		"Failed to convert object value for header 'X-A'",
		"Failed to convert object value for header 'X-A'",
		"Failed to convert object value for header 'X-A'",
		`a header name cannot contain the following prohibited characters: =,;: \t\r\n\v\f:  `,
		"a header name cannot contain the following prohibited characters: =,;: \\t\\r\\n\\v\\f: \t",
		"a header name cannot contain non-ASCII character: \xe9",
		"empty headers are not allowed []",
		"Failed to convert object value for header ''",
		`a header name cannot contain the following prohibited characters: =,;: \t\r\n\v\f: ;`,
		`a header name cannot contain the following prohibited characters: =,;: \t\r\n\v\f: =`,
		"ok",
	}
	lines := strings.Split(lstr(out[0]), "\n")
	require.Len(t, lines, len(want), lstr(out[0]))
	for i, line := range lines {
		// The error is placed where the wrapper called the native function.
		assert.True(t, line == want[i] || strings.HasSuffix(line, ": "+want[i]), "%d: %q", i, line)
	}
	assert.Equal(t, `["a b c"]`, recv(t, got))
}

// TestRequestHeadersCCReplaces: CC sets Host and Connection itself and sends a program's
// User-Agent as spelled; Go's client would send a program's Host, Connection and
// content-length beside its own, and its own User-Agent beside a "user-agent".
func TestRequestHeadersCCReplaces(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	blocks := make(chan string, 1)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			var block []string
			for {
				line, err := r.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
				block = append(block, strings.TrimSpace(line))
			}
			blocks <- strings.Join(block[1:], "|")
			_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
			_ = conn.Close()
		}
	}()
	c := newComputer(t, Options{AllowPrivate: true})
	host := ln.Addr().String()
	c.run(t, `
		local base = ...
		assert(http.request(base, "abc", { ["user-agent"] = "mine", connection = "keep-alive", host = "evil", ["content-length"] = "3" }))
		os.pullEvent("http_success")
	`, "http://"+host)
	sent := map[string][]string{}
	for _, line := range strings.Split(recv(t, blocks), "|") {
		name, value, _ := strings.Cut(line, ": ")
		sent[strings.ToLower(name)] = append(sent[strings.ToLower(name)], value)
	}
	assert.Equal(t, []string{host}, sent["host"])
	assert.Equal(t, []string{"close"}, sent["connection"])
	assert.Equal(t, []string{"3"}, sent["content-length"])
	assert.Equal(t, []string{"mine"}, sent["user-agent"])
}
