package exporter

import (
	"context"
	"errors"
	"testing"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/feature/nvmf"
)

// nvmfFake is fakeSource with an NVMe-oF report.
type nvmfFake struct {
	fakeSource
	rep *nvmf.Report
	err error
}

func (n *nvmfFake) NVMF(context.Context) (*nvmf.Report, error) { return n.rep, n.err }

// Per namespace every counter is a sample with xrq and nsid labels; a
// function without the offload says so with cxray_nvmf_offload 0; a
// source without a command interface leaves the collector out.
func TestNVMFCollector(t *testing.T) {
	c := nvmf.Counters{ReadCmds: 1, ReadBlocks: 2, WriteCmds: 3, WriteBlocks: 4, InlineWrites: 5, Flushes: 6, Errors: 7, BackendErrors: 8}
	src := &nvmfFake{fakeSource: fakeSource{name: "0000:03:00.0"}, rep: &nvmf.Report{Offload: true,
		Namespaces: []nvmf.Namespace{{XRQN: 1, NSID: 2, Totals: c}, {XRQN: 3, NSID: 1}}}}
	s := scrapeOne(t, src, Options{Collectors: []string{"nvmf"}})
	ns := []string{"device", "0000:03:00.0", "xrq", "1", "nsid", "2"}
	for name, want := range map[string]float64{
		"cxray_nvmf_read_commands_total": 1, "cxray_nvmf_read_blocks_total": 2, "cxray_nvmf_write_commands_total": 3,
		"cxray_nvmf_write_blocks_total": 4, "cxray_nvmf_inline_write_commands_total": 5, "cxray_nvmf_flush_commands_total": 6,
		"cxray_nvmf_error_commands_total": 7, "cxray_nvmf_backend_error_commands_total": 8,
	} {
		if got := value(t, s, name, ns...); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
		if s.Types[name] != "counter" {
			t.Errorf("%s is a %s, want a counter", name, s.Types[name])
		}
		if got := value(t, s, name, "xrq", "3", "nsid", "1"); got != 0 {
			t.Errorf("%s of xrq 3 ns 1 = %v, want 0", name, got)
		}
	}
	if value(t, s, "cxray_nvmf_offload") != 1 || value(t, s, "cxray_nvmf_namespaces") != 2 || value(t, s, "cxray_scrape_collector_success", "collector", "nvmf") != 1 {
		t.Error("offload, namespace count or success wrong")
	}

	src.rep = &nvmf.Report{Reason: "this function has no NVMe-oF target offload"}
	s = scrapeOne(t, src, Options{Collectors: []string{"nvmf"}})
	if value(t, s, "cxray_nvmf_offload") != 0 || len(s.Find("cxray_nvmf_read_commands_total")) != 0 || len(s.Find("cxray_nvmf_namespaces")) != 0 {
		t.Error("without the offload: want cxray_nvmf_offload 0 and no namespace series")
	}

	// A failing read is the collector's failure.
	src.err = errors.New("QUERY_HCA_CAP: bad_sys_state")
	s = scrapeOne(t, src, Options{Collectors: []string{"nvmf"}})
	if value(t, s, "cxray_scrape_collector_success", "collector", "nvmf") != 0 {
		t.Error("a failed read must report success 0")
	}

	// No command interface: left out, not failing.
	for _, plain := range []Source{&fakeSource{name: "0000:03:00.0"},
		&nvmfFake{fakeSource: fakeSource{name: "0000:03:00.0"}, err: &adapter.UnsupportedError{What: "the command interface", Backend: "kernel"}}} {
		s = scrapeOne(t, plain, Options{Collectors: []string{"nvmf"}})
		if n := len(s.Find("cxray_scrape_collector_success", "collector", "nvmf")); n != 0 || len(s.Find("cxray_nvmf_offload")) != 0 {
			t.Errorf("%T without commands: the nvmf collector was reported", plain)
		}
	}
}
