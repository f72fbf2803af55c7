package ctl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/cxray/cxray/emu/scenario"
	"github.com/cxray/cxray/internal/clock"
	"github.com/cxray/cxray/prm/builtin"
)

// Whatever a client sends on the control socket, the server answers every
// line with one response that is either ok or says what was wrong, never
// panics, and still answers status afterwards.
func FuzzControlProtocol(f *testing.F) {
	db, err := builtin.Load()
	if err != nil {
		f.Fatal(err)
	}
	sc, err := scenario.FromProfile("cx7-2p400g")
	if err != nil {
		f.Fatal(err)
	}
	e, err := scenario.Build(sc, scenario.Options{DB: db, Clock: clock.NewManual(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))})
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{e: e}
	for _, seed := range []string{
		`{"op":"status"}`,
		`{"op":"fault","set":{"gateway_semaphore_held":"true","register_status":"0x9020:4"}}`,
		`{"op":"module","module":0,"module_faults":["i2c_hang"]}`,
		`{"op":"nv","nv":{"reject_writes":"*"}}` + "\n" + `{"op":"clear"}`,
		`{"op":"advance","duration":"10m"}`,
		`{"op":"fault","set":{"pcie.aer":"BadTLP:5,CmpltTO","pcie.width":"8","pcie.correctable_per_sec":"RxErr:2"}}`,
		`{"op":"fault","bdf":"0000:99:00.0","set":{"removed":"true"}}`,
		`not json`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 4096 {
			return
		}
		defer s.Do(Request{Op: "clear"})
		srv, cli := net.Pipe()
		done := make(chan struct{})
		go func() { s.handle(srv); close(done) }()
		go func() {
			cli.Write(append(append([]byte(nil), in...), '\n'))
			cli.Write([]byte(`{"op":"status"}` + "\n"))
		}()
		dec := json.NewDecoder(bufio.NewReader(cli))
		// Empty lines are requests too (bad ones): count what the scanner
		// sees, then the status.
		want := bytes.Count(append(append([]byte(nil), in...), '\n'), []byte("\n")) + 1
		var last Response
		for i := 0; i < want; i++ {
			var r Response
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("response %d of %d: %v (input %q)", i+1, want, err, in)
			}
			if r.OK == (r.Error != "") {
				t.Fatalf("response %d: ok=%v error=%q", i+1, r.OK, r.Error)
			}
			last = r
		}
		if !last.OK || len(last.Functions) == 0 {
			t.Fatalf("status after %q: %+v", in, last)
		}
		cli.Close()
		<-done
	})
}
