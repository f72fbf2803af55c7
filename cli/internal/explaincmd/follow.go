package explaincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/feature/explain"
)

// runFollow is `explain --follow`: each decoded event of the live kernel
// log, as a line (or a JSON line with -o json), until interrupted or
// --count events.
func (a *app) runFollow(parent context.Context, o *explainOptions) error {
	if o.input != "" {
		return cmdutil.UsageErr("--follow reads the live kernel log (--kmsg); leave out the file")
	}
	f, err := os.Open(o.kmsg)
	if err != nil {
		return cmdutil.DeviceErr(fmt.Errorf("%v; reading the kernel log needs root or CAP_SYSLOG (or kernel.dmesg_restrict=0); run dmesg | cxray explain - for what is already logged", err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
		// /dev/kmsg: start at the end, so only new events are printed.
		if _, err := f.Seek(0, io.SeekEnd); err != nil {
			return cmdutil.DeviceErr(fmt.Errorf("%s: %v", o.kmsg, err))
		}
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	go func() {
		<-ctx.Done()
		f.Close() // unblocks the read
	}()
	n := 0
	var werr error
	fl := explain.NewFollower(a.databases(), func(e explain.Event) {
		if e.Severity == explain.SevInfo && !o.verbose || werr != nil {
			return
		}
		n++
		if a.JSON() {
			b, err := json.Marshal(e)
			if err == nil {
				_, err = fmt.Fprintf(a.Stdout, "%s\n", b)
			}
			werr = err
		} else {
			_, werr = fmt.Fprintf(a.Stdout, "%s %s %s %s [%s] %s\n", cmdutil.Dash(e.Time), cmdutil.Dash(e.Device), e.Class, e.Severity, cmdutil.Dash(e.Category), e.Meaning)
			if werr == nil && e.Next != "" {
				_, werr = fmt.Fprintf(a.Stdout, "    next: %s\n", e.Next)
			}
		}
		if o.count > 0 && n >= o.count {
			cancel()
		}
	})
	err = explain.Follow(ctx, f, fl)
	if werr != nil {
		return werr
	}
	if err != nil && ctx.Err() == nil {
		return cmdutil.DeviceErr(fmt.Errorf("%s: %v", o.kmsg, err))
	}
	if parent.Err() != nil {
		return parent.Err()
	}
	return nil
}
