package exportercmd

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A request over the bound is answered 503 at once, with Retry-After; the
// slot comes back when the answer is computed, before it is sent; HEAD
// gets the headers (Content-Length included) and no body.
func TestLimitRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		w.Header().Set("X-Test", "1")
		io.WriteString(w, "hello")
	})
	l := newLimitRequests(h, 1, time.Minute)
	srv := httptest.NewServer(l)
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := http.Get(srv.URL + "/block")
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("the blocked request: %v %v", resp, err)
			return
		}
		resp.Body.Close()
	}()
	<-entered
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "--web.max-requests") {
		t.Errorf("over the bound: %d %q %q", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	close(release)
	wg.Wait()
	resp, err = http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello" || resp.Header.Get("X-Test") != "1" || resp.ContentLength != 5 {
		t.Errorf("after the slot came back: %d %q %v %d", resp.StatusCode, b, resp.Header, resp.ContentLength)
	}
	resp, err = http.Head(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != 5 {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}

// The landing page answers GET and HEAD only (issue 26.11).
func TestGetOnly(t *testing.T) {
	h := getOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page") }))
	for method, want := range map[string]int{"GET": 200, "HEAD": 200, "POST": 405, "PUT": 405, "DELETE": 405, "OPTIONS": 405} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		if rec.Code != want || (want == 405 && rec.Header().Get("Allow") != "GET, HEAD") {
			t.Errorf("%s /: %d (Allow %q), want %d", method, rec.Code, rec.Header().Get("Allow"), want)
		}
	}
}
