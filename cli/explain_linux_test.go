package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// explain --follow decodes a kernel log as it is written, in real time:
// records arrive on a FIFO one by one, as /dev/kmsg gives them, and each
// decoded event is printed (JSON lines) before the next record comes.
func TestExplainFollowRealTime(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kmsg")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("SKIPPED: no FIFO here: %v", err)
	}
	records := []string{
		"6,1001,5000000,-;mlx5_core 0000:03:00.0: firmware version: 28.39.1002",
		"3,1002,5100000,-;mlx5_core 0000:03:00.0: mlx5_cmd_out_err:838:(pid 4117): CREATE_MKEY(0x200) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1b3a4f), err(-22)",
		" SUBSYSTEM=pci",
		" DEVICE=+pci:0000:03:00.0",
		"4,1003,5200000,-;mlx5_core 0000:03:00.1: Port module event[error]: module 1, Cable error, Bus stuck (I2C or data shorted)",
		"4,1004,5300000,-;mlx5_core 0000:03:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)",
		"4,1005,5300001,-;mlx5_core 0000:03:00.0:   device [15b3:1021] error status/mask=00000001/00002000",
		"4,1006,5300002,-;mlx5_core 0000:03:00.0:    [ 0] RxErr                  (First)",
	}
	// A GPU node's ten functions each report a link going down.
	for f := 0; f < 10; f++ {
		records = append(records, fmt.Sprintf("4,%d,%d,-;mlx5_core 0000:%02x:00.0 ens%dnp0: Link down", 1100+f, 6000000+f, 0x18+f*0x10, f))
	}
	type result struct {
		out, errs string
		code      int
	}
	done := make(chan result, 1)
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		code := runContext(ctx, []string{"explain", "--follow", "--kmsg", fifo, "--count", "13", "-o", "json"}, strings.NewReader(""), &out, &errb)
		done <- result{out.String(), errb.String(), code}
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	for _, r := range records {
		if _, err := fmt.Fprintln(w, r); err != nil {
			break // the reader stopped after --count events
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.Close()
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("explain --follow did not stop after --count events")
	}
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errs)
	}
	var classes []string
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		var e struct{ Class, Severity, Device, Category string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		classes = append(classes, e.Class+"/"+e.Device+"/"+e.Category)
	}
	want := []string{"command/0000:03:00.0/software use", "module/0000:03:00.1/hardware", "pcie/0000:03:00.0/hardware"}
	for f := 0; f < 10; f++ {
		want = append(want, fmt.Sprintf("port/0000:%02x:00.0/hardware", 0x18+f*0x10))
	}
	if strings.Join(classes, " ") != strings.Join(want, " ") {
		t.Errorf("events %v, want %v", classes, want)
	}
	if time.Since(start) < 500*time.Millisecond {
		t.Errorf("the events came before the records were written")
	}
}
