package exportercmd

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// limitRequests bounds what clients can hold of the exporter, by requests
// rather than by connections (node_exporter's --web.max-requests): an
// idle keep-alive connection, a client trickling its headers (slowloris) or
// a TLS handshake never finished holds a connection and a goroutine, cut
// by the server's timeouts, but no slot. A connection limit counted those,
// and 64 of them stopped every scrape (issue 26.4).
//
// A request takes a slot while its answer is computed (the devices read,
// the metrics encoded into memory), at most maxRequests at once; the slot
// is given back before the answer is written, so a client that does not
// read its answer holds only its buffered answer, for at most writeFor,
// and at most 4 × maxRequests answers are written at once. A request over
// either bound is answered 503 at once, as promhttp's MaxRequestsInFlight
// does. maxRequests 0 leaves the computing unbounded (answers are still
// buffered and bounded in time).
type limitRequests struct {
	next     http.Handler
	compute  chan struct{} // nil: unbounded
	write    chan struct{} // nil: unbounded
	writeFor time.Duration
}

func newLimitRequests(next http.Handler, maxRequests int, writeFor time.Duration) *limitRequests {
	l := &limitRequests{next: next, writeFor: writeFor}
	if maxRequests > 0 {
		l.compute = make(chan struct{}, maxRequests)
		l.write = make(chan struct{}, 4*maxRequests)
	}
	return l
}

func take(slots chan struct{}) bool {
	if slots == nil {
		return true
	}
	select {
	case slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func give(slots chan struct{}) {
	if slots != nil {
		<-slots
	}
}

func (l *limitRequests) busy(w http.ResponseWriter, what string, n int) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, fmt.Sprintf("cxray exporter: %d %s at once already (--web.max-requests); retry shortly", n, what), http.StatusServiceUnavailable)
}

func (l *limitRequests) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !take(l.write) {
		l.busy(w, "answers being sent", cap(l.write))
		return
	}
	defer give(l.write)
	if !take(l.compute) {
		l.busy(w, "requests being answered", cap(l.compute))
		return
	}
	buf := &bufferedResponse{header: http.Header{}}
	func() {
		defer give(l.compute)
		l.next.ServeHTTP(buf, r)
	}()
	// The write deadline counts from now, not from the request: the
	// answer is ready, and only the client's reading is left.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(l.writeFor))
	for k, v := range buf.header {
		w.Header()[k] = v
	}
	if buf.code == 0 {
		buf.code = http.StatusOK
	}
	if w.Header().Get("Content-Length") == "" {
		w.Header().Set("Content-Length", strconv.Itoa(buf.body.Len()))
	}
	w.WriteHeader(buf.code)
	if r.Method != http.MethodHead {
		w.Write(buf.body.Bytes())
	}
}

// bufferedResponse keeps a handler's answer in memory.
type bufferedResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(p)
}

// getOnly answers only GET and HEAD: the exporter changes nothing, and a
// landing page that answers 200 to any method tells scanners otherwise.
func getOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "cxray exporter is read-only: only GET and HEAD are served", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}
