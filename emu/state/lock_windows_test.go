package state

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// tempDir is t.TempDir without its cleanup check: under Wine 8 Go's
// RemoveAll fails ("Invalid function"), which says nothing about locks.
func tempDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "cxray-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// The LockFileEx half (lock_windows.go): the users lock shows a log in
// use and keeps RemoveLog off it, the access lock excludes other handles
// of this process and other processes, and closing drops both.
func TestWindowsLocks(t *testing.T) {
	path := filepath.Join(tempDir(t), "s.log")
	a, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if in, err := InUse(path); err != nil || !in {
		t.Errorf("InUse with two opens: %v %v", in, err)
	}
	if err := RemoveLog(path); !errors.Is(err, ErrInUse) {
		t.Errorf("RemoveLog while open: %v, want ErrInUse", err)
	}
	if _, err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := tryLock(b.f, lockAccess, lockExclusive); ok || err != nil {
		t.Errorf("second handle took the access lock a holds: %v %v", ok, err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	if ok, err := tryLock(b.f, lockAccess, lockExclusive); !ok || err != nil {
		t.Errorf("access lock not free after Unlock: %v %v", ok, err)
	}
	tryLock(b.f, lockAccess, lockNone)
	a.Close()
	b.Close()
	if in, err := InUse(path); err != nil || in {
		t.Errorf("InUse after both closed: %v %v", in, err)
	}

	// Two processes and two goroutines append under the access lock:
	// every record lands, in each writer's order.
	const n = 30
	var cmds []*exec.Cmd
	for p := 0; p < 2; p++ {
		c := exec.Command(os.Args[0], "-test.run=^$", fmt.Sprintf("%s:p%d:%d", path, p, n))
		c.Env = append(os.Environ(), envChild+"=append")
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := appendN(path, fmt.Sprintf("g%d", g), n); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
	_, recs, err := ReadLog(path)
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]int{}
	for _, r := range recs {
		if r.Cage != next[r.Adapter] {
			t.Fatalf("%s: record %d after %d: out of order or lost", r.Adapter, r.Cage, next[r.Adapter]-1)
		}
		next[r.Adapter]++
	}
	if len(recs) != 4*n || len(next) != 4 {
		t.Errorf("%d records from %d writers, want %d from 4", len(recs), len(next), 4*n)
	}
	if err := RemoveLog(path); err != nil {
		t.Logf("RemoveLog of a closed log: %v (Wine 8 cannot delete through Go's Windows calls)", err)
	}
}
