package health

import (
	"context"
	"fmt"
	"strings"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/explain"
	"github.com/cxray/cxray/prm/cmdb"
)

// maxLogDetails bounds the events a kernel-log check lists (the most
// recent ones).
const maxLogDetails = 8

// kernelLog is the "kernel log" check: the function's recent mlx5, PCIe
// and AER errors in the kernel log, decoded as cxray explain decodes them.
// Only adapters with the kernel's view of the function have one (direct
// and kernel backends on Linux); ok is false for the others, which get no
// line.
func kernelLog(ctx context.Context, a *adapter.Adapter) (Check, bool) {
	kd := a.Kernel()
	if kd == nil {
		return Check{}, false
	}
	c := Check{Name: "kernel log", Status: OK}
	b, err := kd.Log(ctx)
	if err != nil {
		c.Status, c.Summary = Skip, "not readable: "+err.Error()
		c.Next = "run as root (or with CAP_SYSLOG), or run dmesg | cxray explain - where the log is readable"
		return c, true
	}
	var dbs explain.Databases
	if cdb, err := cmdb.Load(); err == nil {
		dbs.Commands = cdb
	}
	names := map[string]bool{a.BDF(): true}
	if kd.RDMA != "" {
		names[kd.RDMA] = true
	}
	var mine []explain.Event
	hw := false
	for _, e := range explain.KernelEvents(string(b), dbs) {
		if e.Severity == explain.SevInfo || !names[e.Device] {
			continue
		}
		mine = append(mine, e)
		hw = hw || (e.Severity == explain.SevProblem && (e.Category == explain.CatHardware || e.Category == explain.CatFirmware))
	}
	if len(mine) == 0 {
		c.Summary = "no mlx5, PCIe or AER error for this function in the kernel log"
		return c, true
	}
	c.Status = Warn
	if hw {
		c.Status = Fail
	}
	classes := map[string]int{}
	for _, e := range mine {
		classes[e.Class]++
	}
	var parts []string
	for _, k := range []string{explain.ClassHealth, explain.ClassProbe, explain.ClassPCIe, explain.ClassCommand, explain.ClassCQE, explain.ClassModule, explain.ClassPort, explain.ClassQueue, explain.ClassTemperature} {
		if classes[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", classes[k], k))
		}
	}
	c.Summary = fmt.Sprintf("%d error(s) for this function in the kernel log: %s", len(mine), strings.Join(parts, ", "))
	if len(mine) > maxLogDetails {
		c.Details = append(c.Details, fmt.Sprintf("the %d most recent:", maxLogDetails))
		mine = mine[len(mine)-maxLogDetails:]
	}
	for _, e := range mine {
		when := ""
		if e.Time != "" {
			when = "[" + e.Time + "] "
		}
		c.Details = append(c.Details, fmt.Sprintf("%s%s [%s] %s", when, e.Class, e.Category, e.Meaning))
	}
	c.Next = mine[len(mine)-1].Next
	if c.Next == "" {
		c.Next = "dmesg | cxray explain - decodes the whole log"
	}
	return c, true
}
