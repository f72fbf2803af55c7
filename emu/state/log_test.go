package state

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The test binary doubles as a second process appending to a log (and, in
// state_test.go, writing through a state).
const envChild = "CXRAY_STATE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		if err := child(mode, os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(mode, arg string) error {
	switch mode {
	case "append":
		// arg: PATH:WHO:N (split from the right: a Windows PATH has a colon)
		parts := strings.Split(arg, ":")
		k := len(parts)
		if k < 3 {
			return fmt.Errorf("append: want PATH:WHO:N, got %q", arg)
		}
		n, _ := strconv.Atoi(parts[k-1])
		return appendN(strings.Join(parts[:k-2], ":"), parts[k-2], n)
	case "paos-down":
		return childPAOSDown(arg)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func testHeader() Header {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	return Header{Key: "profile-test", Name: "emu:test", Source: "profile test", SHA256: "abc", Origin: t0, WallBase: t0, Manual: true}
}

// appendN appends n records, one lock at a time, as who.
func appendN(path, who string, n int) error {
	l, err := OpenLog(path, testHeader())
	if err != nil {
		return err
	}
	defer l.Close()
	for i := 0; i < n; i++ {
		if _, err := l.Lock(); err != nil {
			return err
		}
		err := l.Append(Record{Kind: KindPlug, Adapter: who, Cage: i, Time: time.Unix(int64(i), 0).UTC()})
		if uerr := l.Unlock(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func TestLogRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	a, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := []Record{
		{Kind: KindRegister, Time: time.Date(2024, 1, 1, 0, 0, 1, 5, time.UTC), BDF: "0000:03:00.0", ID: 0x5006, Method: 2, Data: []byte{0, 1, 2, 0xff}},
		{Kind: KindClock, Time: time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC)},
		{Kind: KindPlug, Time: time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC), Adapter: "cx7", Cage: 1, Module: "empty"},
	}
	if _, err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(want...); err != nil {
		t.Fatal(err)
	}
	a.Unlock()
	got, err := b.Lock()
	if err != nil {
		t.Fatal(err)
	}
	b.Unlock()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the other Log read (-want +got):\n%s", d)
	}
	// Nothing new the second time; its own appends are not read back.
	if got, _ := b.Lock(); len(got) != 0 {
		t.Errorf("read again: %v", got)
	}
	b.Append(Record{Kind: KindClock, Time: time.Unix(5, 0).UTC()})
	b.Unlock()
	if got, _ := b.Lock(); len(got) != 0 {
		t.Errorf("own record read back: %v", got)
	}
	b.Unlock()
	hdr, all, err := ReadLog(path)
	if err != nil || len(all) != 4 || hdr.Key != "profile-test" || hdr.Format != Format || hdr.Version != Version {
		t.Errorf("ReadLog: %+v, %d records, %v", hdr, len(all), err)
	}
	if err := a.Append(want[0]); err == nil {
		t.Error("Append without the lock was accepted")
	}
}

// Appenders in other processes and goroutines, each with its own open
// file, interleave whole records and lose none.
func TestLogConcurrentAppenders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	const procs, gos, n = 3, 3, 40
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		c := exec.Command(os.Args[0], "-test.run=^$", fmt.Sprintf("%s:p%d:%d", path, p, n))
		c.Env = append(os.Environ(), envChild+"=append")
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	var wg sync.WaitGroup
	errs := make(chan error, gos)
	for g := 0; g < gos; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- appendN(path, fmt.Sprintf("g%d", g), n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
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
	if len(recs) != (procs+gos)*n || len(next) != procs+gos {
		t.Errorf("%d records from %d writers, want %d from %d", len(recs), len(next), (procs+gos)*n, procs+gos)
	}
}

// A record cut short (no newline, or a damaged last line) is ignored, and
// the next append replaces it.
func TestLogTornLastRecord(t *testing.T) {
	for _, tail := range []string{
		`1234abcd {"k":"plug","t":"2024-01-01T00:`,                   // no newline
		"00000000 {\"k\":\"plug\",\"t\":\"2024-01-01T00:00:00Z\"}\n", // checksum
		"\x00\x00\x00\x00\x00\x00",                                   // zeros a power loss left
	} {
		path := filepath.Join(t.TempDir(), "s.log")
		if err := appendN(path, "a", 2); err != nil {
			t.Fatal(err)
		}
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(tail)
		f.Close()
		if _, recs, err := ReadLog(path); err != nil || len(recs) != 2 {
			t.Errorf("%q: ReadLog: %d records, %v", tail, len(recs), err)
		}
		l, err := OpenLog(path, testHeader())
		if err != nil {
			t.Fatal(err)
		}
		recs, err := l.Lock()
		if err != nil || len(recs) != 2 {
			t.Errorf("%q: Lock: %d records, %v", tail, len(recs), err)
		}
		l.Append(Record{Kind: KindClock, Time: time.Unix(9, 0).UTC()})
		l.Unlock()
		l.Close()
		_, recs, err = ReadLog(path)
		if err != nil || len(recs) != 3 || recs[2].Kind != KindClock {
			t.Errorf("%q: after an append: %v, %v", tail, recs, err)
		}
	}
}

// A damaged record with good ones after it is not a torn write: the log
// is refused.
func TestLogDamagedMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	if err := appendN(path, "a", 3); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = strings.Replace(lines[2], `"cage":1`, `"cage":7`, 1) // checksum no longer fits
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
	l, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Lock(); err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "emu reset") {
		t.Errorf("damaged record: %v", err)
	}
}

// A log of another scenario, another scenario content, or another version
// is refused with the reason.
func TestLogRefusesAnother(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	l, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	other := testHeader()
	other.Key, other.Name, other.Source = "profile-x", "emu:x", "profile x"
	changed := testHeader()
	changed.SHA256 = "def"
	clk := testHeader()
	clk.Manual = false
	for _, c := range []struct {
		h    Header
		want string
	}{
		{other, "it is the state of emu:test (profile test), not of emu:x"},
		{changed, "the profile test (a new cxray?) changed since the state was made"},
		{clk, "clock mode changed"},
	} {
		if _, err := OpenLog(path, c.h); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "cxray emu reset") {
			t.Errorf("want %q: %v", c.want, err)
		}
	}
	// A log written by another version of the format.
	b, _ := encodeLine(Header{Format: Format, Version: Version + 1, Key: "profile-test", Source: "profile test", SHA256: "abc"})
	os.WriteFile(path, b, 0o644)
	if _, err := OpenLog(path, testHeader()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d; this one writes version %d", Version+1, Version)) {
		t.Errorf("other version: %v", err)
	}
	os.WriteFile(path, []byte("hello\n"), 0o644)
	if _, err := OpenLog(path, testHeader()); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("not a log: %v", err)
	}
}

// A log in use cannot be removed; once closed it can.
func TestRemoveLogInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	l, err := OpenLog(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if in, err := InUse(path); err != nil || !in {
		t.Errorf("InUse while open: %v %v", in, err)
	}
	if err := RemoveLog(path); !errors.Is(err, ErrInUse) {
		t.Errorf("remove while open: %v", err)
	}
	l.Close()
	if in, err := InUse(path); err != nil || in {
		t.Errorf("InUse after close: %v %v", in, err)
	}
	if err := RemoveLog(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("still there: %v", err)
	}
}

func TestLineFormat(t *testing.T) {
	b, err := encodeLine(Record{Kind: KindClock, Time: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	j, ok := decodeLine(b[:len(b)-1])
	if !ok || string(j) != `{"k":"clock","t":"1970-01-01T00:00:00Z"}` {
		t.Errorf("%q -> %q %v", b, j, ok)
	}
	b[3] ^= 1
	if _, ok := decodeLine(b[:len(b)-1]); ok {
		t.Error("a changed checksum passed")
	}
}
