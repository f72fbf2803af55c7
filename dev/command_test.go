package dev_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cxray/cxray/access/fwctl"
	"github.com/cxray/cxray/dev"
	"github.com/cxray/cxray/emu/cmdif/cmdiftest"
	"github.com/cxray/cxray/prm"
	"github.com/cxray/cxray/prm/cmdb"
)

func TestCommand(t *testing.T) {
	r := cmdiftest.Profile(t, "cx7-2p400g")
	d, ep := r.Devices[0], r.Endpoints[0]
	ctx := context.Background()
	rep, err := d.RunCommand(ctx, "query_adapter", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cmdb.Opcode(rep.Request) != 0x101 || rep.Command.Name != "QUERY_ADAPTER" {
		t.Errorf("request %x for %s", rep.Request, rep.Command.Name)
	}
	if v, err := rep.Decoded.Get("query_adapter_struct.vsd_contd_psid"); err != nil || v.TextString() != "MT_0000000834" {
		t.Errorf("PSID %q %v", v.TextString(), err)
	}

	// Refused before anything is sent, with the reason.
	calls := ep.Calls()
	for name, c := range map[string]struct {
		cmd    string
		fields []prm.Assignment
		reason string
	}{
		"create":         {"CREATE_MKEY", nil, "refuses CREATE_MKEY at every scope"},
		"modify":         {"MODIFY_NIC_VPORT_CONTEXT", nil, "not a query"},
		"register write": {"ACCESS_REG", []prm.Assignment{{Path: "op_mod", Value: "0"}}, "changes the device"},
		"set caps":       {"SET_HCA_CAP", nil, "changes the device"},
		"no out layout":  {"QUERY_MTT", nil, "out mailbox"},
	} {
		_, err := d.Command(ctx, c.cmd, c.fields)
		if !dev.IsRefused(err) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want refused: %q", name, err, c.reason)
		}
	}
	if ep.Calls() != calls {
		t.Errorf("%d refused commands reached the firmware", ep.Calls()-calls)
	}
	if _, err := d.Command(ctx, "QUERY_HCA_CAP", []prm.Assignment{{Path: "bogus", Value: "1"}}); err == nil || !strings.Contains(err.Error(), "op_mod") {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := d.Command(ctx, "QUERY_NOTHING", nil); err == nil || !strings.Contains(err.Error(), "no command") {
		t.Errorf("unknown command: %v", err)
	}
	_, err = d.Command(ctx, "QUERY_QP", []prm.Assignment{{Path: "qpn", Value: "0x4242"}})
	var ce *fwctl.CommandError
	if !dev.IsCommandStatus(err) || !errors.As(err, &ce) || ce.Status != 3 || !dev.IsNoSuchObject(err) || !strings.HasPrefix(err.Error(), "QUERY_QP (0x50b) op_mod 0x0 failed with status 0x3") || strings.Contains(err.Error(), "fwctl") {
		t.Errorf("status: %v", err)
	}

	d.AttachCommander(nil)
	if _, err := d.Command(ctx, "QUERY_ADAPTER", nil); !errors.Is(err, dev.ErrNoCommands) || d.Commander() != nil {
		t.Errorf("detached: %v", err)
	}
}
