package fwcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/adapter"
	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/objects"
	"github.com/cxray/cxray/kernel"
)

// objectArgs: one object number, or none with --list.
func objectArgs(list *bool) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case *list && len(args) > 0:
			return cmdutil.UsageErr("give a number or --list, not both")
		case !*list && len(args) != 1:
			return cmdutil.UsageErr("give one number, or --list to see them all")
		}
		return nil
	}
}

// qpList is qp --list's JSON.
type qpList struct {
	Device  string        `json:"device"`
	InError int           `json:"in_error"`
	QPs     []*objects.QP `json:"qps"`
}

func (a *app) runListQPs(df cmdutil.DeviceFlags) error {
	ctx, cancel := df.Context(a.Ctx)
	defer cancel()
	ad, err := a.openObjects(ctx, df)
	if err != nil {
		return err
	}
	defer ad.Close()
	qps, err := objects.ListQPs(ctx, ad)
	if err != nil {
		return listErr(ad, "QPs", err)
	}
	out := qpList{Device: cmdutil.Describe(ad), QPs: qps}
	for _, q := range qps {
		if q.Error {
			out.InError++
		}
	}
	if a.JSON() {
		if err := a.WriteJSON(out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.Stdout, "%s: %d QPs, %d in an error state\n", out.Device, len(qps), out.InError)
		if len(qps) > 0 {
			t := a.NewTable("QPN", "STATE", "TYPE", "REMOTE QPN", "UNACKED", "RETRIES", "RNR RETRIES", "ERROR")
			for _, q := range qps {
				t.Row(fmt.Sprintf("0x%06x", q.QPN), q.State, q.Type, fmt.Sprintf("0x%06x", q.RemoteQPN), fmt.Sprint(q.Unacked),
					fmt.Sprintf("%d of %d", q.CurRetry, q.RetryCount), fmt.Sprintf("%d of %d", q.CurRNRRetry, q.RNRRetry), dashIf(q.ErrorNote))
			}
			t.Flush()
		}
	}
	if out.InError > 0 {
		return cmdutil.ErrProblem
	}
	return nil
}

// mkeyList is mkey --list's JSON.
type mkeyList struct {
	Device string          `json:"device"`
	MKeys  []*objects.MKey `json:"mkeys"`
}

func (a *app) runListMKeys(df cmdutil.DeviceFlags) error {
	ctx, cancel := df.Context(a.Ctx)
	defer cancel()
	ad, err := a.openObjects(ctx, df)
	if err != nil {
		return err
	}
	defer ad.Close()
	ms, err := objects.ListMKeys(ctx, ad)
	if err != nil {
		return listErr(ad, "memory keys", err)
	}
	out := mkeyList{Device: cmdutil.Describe(ad), MKeys: ms}
	if a.JSON() {
		return a.WriteJSON(out)
	}
	fmt.Fprintf(a.Stdout, "%s: %d memory keys\n", out.Device, len(ms))
	if len(ms) == 0 {
		return nil
	}
	t := a.NewTable("KEY", "ACCESS", "MODE", "START", "LENGTH", "PAGE SIZE", "PD", "QP")
	for _, m := range ms {
		rows := m.Rows() // FIELD, VALUE pairs in a fixed order
		v := map[string]string{}
		for _, r := range rows[1:] {
			v[r[0]] = r[1]
		}
		t.Row(v["key"], dashIf(v["access"]), v["access mode"], v["start"], v["length"], v["page size"], v["pd"], v["qp"])
	}
	t.Flush()
	return nil
}

func (a *app) openObjects(ctx context.Context, df cmdutil.DeviceFlags) (*adapter.Adapter, error) {
	db, err := a.DB()
	if err != nil {
		return nil, err
	}
	return a.Open(ctx, df.Name, db)
}

// listErr: a function that can list neither way says both; a command or
// kernel failure keeps its class.
func listErr(ad *adapter.Adapter, what string, err error) error {
	if errors.Is(err, adapter.ErrUnsupported) {
		return cmdutil.DeviceErr(fmt.Errorf("%s: cannot list its %s: %w; with the command interface (fwctl), the kernel's list of objects is needed too", cmdutil.Describe(ad), what, err))
	}
	var ke *kernel.UnsupportedError
	if errors.As(err, &ke) {
		return cmdutil.DeviceErr(fmt.Errorf("%s: cannot list its %s: %w", cmdutil.Describe(ad), what, err))
	}
	return commandErr(err)
}

func dashIf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
