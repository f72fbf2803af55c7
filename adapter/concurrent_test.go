package adapter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/dev/devtest"
)

// The adapter is documented safe for concurrent use, and the exporter and
// monitor use it so: readers on several goroutines while the transport
// fails now and then and the register path is reopened. Run under -race
// (scripts/test.sh does); without it the test still checks that every
// read returns either the device's answer or the transport's error, and
// that every path opened is closed exactly once.
func TestConcurrentUseWithReopen(t *testing.T) {
	ctx := context.Background()
	db := devtest.DB(t)
	f := devtest.New(db)
	mgir(f)
	f.Put("PMLP", "local_port=1", "width=4", "lane_module_mapping[0].module=0")
	f.Put("PAOS", "local_port=1", "admin_status=up", "oper_status=up")
	f.Put("MTMP", "sensor_index=0", "temperature=400")
	gone := errors.New("config space reads all ones")
	var n atomic.Int64
	f.Hook = func(dev.Method, string) error {
		if n.Add(1)%7 == 0 {
			return gone
		}
		return nil
	}
	var opens, closes atomic.Int64
	reopen := func(context.Context) (*dev.Device, error) {
		opens.Add(1)
		return dev.New("test", testBDF, dev.BackendDirect, db, f, func() error { closes.Add(1); return nil }), nil
	}
	a := open(f, db, adapter.Config{Reopen: reopen})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				var err error
				switch g % 4 {
				case 0:
					var id *adapter.Identity
					if id, err = a.Identity(ctx); err == nil && id.PSID != "MT_0000000838" {
						err = errors.New("identity: PSID " + id.PSID)
					}
				case 1:
					var ps []adapter.Port
					if ps, err = a.Ports(ctx); err == nil && (len(ps) != 1 || ps[0].Local != 1) {
						err = errors.New("ports: not local port 1")
					}
				case 2:
					_, err = a.Links(ctx)
				case 3:
					_, err = a.Temperatures(ctx)
				}
				if err != nil && !errors.Is(err, gone) {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a concurrent read: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if o, c := opens.Load(), closes.Load(); o < 2 || o != c {
		t.Errorf("%d register paths opened, %d closed (want every one closed once, and a reopen)", o, c)
	}
}
