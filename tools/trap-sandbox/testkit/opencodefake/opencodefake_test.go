package opencodefake

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const password = "secret"

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// TestAuthMatrix is the reference's matrix (opencode-server.md, "Auth matrix"), row by row,
// plus the routes around it.
func TestAuthMatrix(t *testing.T) {
	oc := Start(t, Options{Password: password})
	token := base64.StdEncoding.EncodeToString([]byte("opencode:" + password))
	cases := []struct {
		name, method, path, auth string
		status                   int
		contentType, body        string
	}{
		{name: "no Authorization", path: HealthPath, status: 401},
		{name: "right credentials", path: HealthPath, auth: basic("opencode", password), status: 200, contentType: "application/json", body: HealthBody},
		{name: "wrong password", path: HealthPath, auth: basic("opencode", "wrong"), status: 401},
		{name: "other username", path: HealthPath, auth: basic("admin", password), status: 401},
		{name: "username in another case", path: HealthPath, auth: basic("OPENCODE", password), status: 401},
		{name: "empty username", path: HealthPath, auth: basic("", password), status: 401},
		{name: "empty password", path: HealthPath, auth: basic("opencode", ""), status: 401},
		{name: "Bearer", path: HealthPath, auth: "Bearer " + password, status: 401},
		{name: "lower-case scheme", path: HealthPath, auth: "basic " + token, status: 200, contentType: "application/json", body: HealthBody},
		{name: "tab after the scheme", path: HealthPath, auth: "Basic\t" + token, status: 200, contentType: "application/json", body: HealthBody},
		{name: "bad base64", path: HealthPath, auth: "Basic !!!notb64", status: 401},
		{name: "auth_token query", path: HealthPath + "?auth_token=" + token, status: 200, contentType: "application/json", body: HealthBody},
		{name: "auth_token checked before the header", path: HealthPath + "?auth_token=bm9wZQ==", auth: basic("opencode", password), status: 401},
		{name: "trailing slash", path: HealthPath + "/", auth: basic("opencode", password), status: 200, contentType: "application/json", body: HealthBody},
		{name: "HEAD falls through to the web UI", method: http.MethodHead, path: HealthPath, auth: basic("opencode", password), status: 200, contentType: "text/html"},
		{name: "POST falls through to the web UI", method: http.MethodPost, path: HealthPath, auth: basic("opencode", password), status: 200, contentType: "text/html", body: WebUI},
		{name: "HEAD without auth", method: http.MethodHead, path: HealthPath, status: 401},
		{name: "unknown path answers the web UI", path: "/app", auth: basic("opencode", password), status: 200, contentType: "text/html", body: WebUI},
		{name: "unknown path needs auth", path: "/app", status: 401},
		{name: "v2 health", path: "/api/health", auth: basic("opencode", password), status: 200, contentType: "application/json", body: `{"healthy":true}`},
		{name: "v2 health 401 has a JSON body", path: "/api/health", status: 401, contentType: "application/json", body: apiUnauthorized},
		{name: "manifest is public", path: "/site.webmanifest", status: 200, contentType: "application/manifest+json"},
		{name: "icon is public", path: "/web-app-manifest-192x192.png", status: 200, contentType: "image/png"},
		{name: "CORS preflight is public", method: http.MethodOptions, path: HealthPath, status: 204},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := http.NewRequest(method, oc.URL+tc.path, nil)
			require.NoError(t, err)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.contentType, resp.Header.Get("Content-Type"))
			if tc.status == http.StatusUnauthorized {
				assert.Equal(t, Realm, resp.Header.Get("Www-Authenticate"))
			}
			if tc.body != "" || tc.status == http.StatusUnauthorized {
				assert.Equal(t, tc.body, string(body))
			}
		})
	}
}

// TestUnauthorizedOnTheWire: the 401 as bytes, since Go's client hides header-name case:
// the challenge header in lower case, Content-Length 0, no Content-Type.
func TestUnauthorizedOnTheWire(t *testing.T) {
	oc := Start(t, Options{Password: password})
	conn, err := net.Dial("tcp", strings.TrimPrefix(oc.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "GET "+HealthPath+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	raw, err := io.ReadAll(conn)
	require.NoError(t, err)
	head := string(raw)
	assert.True(t, strings.HasPrefix(head, "HTTP/1.1 401 "), head)
	assert.Contains(t, head, "\r\nwww-authenticate: "+Realm+"\r\n")
	assert.Contains(t, head, "\r\nContent-Length: 0\r\n")
	assert.NotContains(t, strings.ToLower(head), "content-type")
}

func TestWithoutPasswordAnyCredentialsPass(t *testing.T) {
	oc := Start(t, Options{})
	for _, auth := range []string{"", basic("anyone", "anything"), "Bearer x"} {
		req, err := http.NewRequest(http.MethodGet, oc.URL+HealthPath, nil)
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, auth)
		assert.Equal(t, HealthBody, string(body), auth)
		assert.Equal(t, auth != "", oc.LastHadAuth())
	}
	assert.EqualValues(t, 3, oc.HealthHits())
	assert.EqualValues(t, 3, oc.Requests())
}

func TestCustomUsernameAndColonInPassword(t *testing.T) {
	oc := Start(t, Options{Username: "alice", Password: "p:a ss"})
	get := func(auth string) int {
		req, err := http.NewRequest(http.MethodGet, oc.URL+HealthPath, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(basic("alice", "p:a ss")), "split at the first colon")
	assert.Equal(t, http.StatusUnauthorized, get(basic("opencode", "p:a ss")), "OPENCODE_SERVER_USERNAME replaces the default")
	assert.EqualValues(t, 1, oc.HealthHits(), "only the request that passed auth counts")
}

// TestStallHoldsUntilTheClientGivesUp: a stalled fake never answers; the request ends by the
// client's own deadline, and the fake still shuts down at the test's end.
func TestStallHoldsUntilTheClientGivesUp(t *testing.T) {
	oc := Start(t, Options{})
	oc.Stall()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, oc.URL+HealthPath, nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, oc.HealthHits())
}

// TestCloseReleasesStalledRequests: a request still held when the fake closes gets an
// answer (an empty 200) instead of holding the server's shutdown.
func TestCloseReleasesStalledRequests(t *testing.T) {
	oc := Start(t, Options{})
	oc.Stall()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(oc.URL + HealthPath)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return oc.Requests() == 1 }, 5*time.Second, time.Millisecond)
	oc.Close()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled request was not released")
	}
}

func TestFailWithAnswersEveryRequestBeforeAuth(t *testing.T) {
	oc := Start(t, Options{Password: password})
	oc.FailWith(http.StatusBadGateway)
	resp, err := http.Get(oc.URL + HealthPath)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, "Bad Gateway\n", string(body))
	assert.Empty(t, resp.Header.Get("Www-Authenticate"))
}

// TestHandleAddsRoutesBehindAuth: a route added later (issue 20's sessions) gets the fake's
// auth without doing anything for it.
func TestHandleAddsRoutesBehindAuth(t *testing.T) {
	oc := New(Options{Password: password})
	oc.Handle("POST /session", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"ses_1"}`)
	}))
	srv := httptest.NewServer(oc)
	t.Cleanup(srv.Close)
	post := func(auth string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/session", strings.NewReader("{}"))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, _ := post("")
	assert.Equal(t, http.StatusUnauthorized, status)
	status, body := post(basic("opencode", password))
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, `{"id":"ses_1"}`, body)
}

func TestClosedPortURLRefuses(t *testing.T) {
	_, err := http.Get(ClosedPortURL(t) + HealthPath)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
}

// TestClosedPortURLStaysRefused: the port stays held for the test, so nothing else on the
// machine (another test, another user's server) can listen there and answer in its place.
func TestClosedPortURLStaysRefused(t *testing.T) {
	u := ClosedPortURL(t)
	l, err := net.Listen("tcp", strings.TrimPrefix(u, "http://"))
	if err == nil {
		_ = l.Close()
	}
	require.Error(t, err, "another listener took the closed port")
	_, err = http.Get(u + HealthPath)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
}

func TestReservePortFreesItOnRelease(t *testing.T) {
	addr, release := ReservePort(t)
	_, err := http.Get("http://" + addr + HealthPath)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")
	release()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the released port is free to listen on")
	require.NoError(t, l.Close())
	release() // a second call does nothing, as the test's cleanup makes one
}
