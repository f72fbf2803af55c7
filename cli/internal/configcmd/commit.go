package configcmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cxray/cxray/cli/internal/cmdutil"
	"github.com/cxray/cxray/internal/atomicfile"

	"github.com/cxray/cxray/nvconf"
)

// commit asks (unless yes), then has nvconf commit the change: lock,
// replan, backup, journal, write, verify.
func (cc *configCtx) commit(ctx context.Context, t *nvTarget, question string, c nvconf.Change, yes bool, backupPath string) (string, error) {
	if err := cc.a.Ask(yes, question, "nothing written"); err != nil {
		return "", err
	}
	c.Key, c.Device, c.Confirmed = t.key(), t.ad.Name(), !yes
	path, err := t.s.Commit(ctx, c, nvconf.BackupOptions{Path: backupPath, Info: cc.backupInfo(ctx, t), Tool: cc.a.Version})
	var be *nvconf.BackupError
	if errors.As(err, &be) {
		return "", cmdutil.UsageWrap(err)
	}
	return path, cmdutil.Classify(err)
}

func (cc *configCtx) backupInfo(ctx context.Context, t *nvTarget) nvconf.BackupInfo {
	var model, psid string
	if id, err := t.ad.Identity(ctx); err == nil {
		model, psid = id.Model, id.PSID
	}
	return nvconf.BackupInfo{Model: model, PSID: psid, Lines: []string{
		"device: " + t.deviceLine(ctx),
		"taken: " + time.Now().UTC().Format(time.RFC3339),
		"parameter database: " + t.nv.Source,
	}}
}

// writeFileAtomic writes via a temporary file and a rename, so a crash never
// leaves half a file under the final name.
func writeFileAtomic(path string, b []byte) error {
	if path == "-" {
		return errors.New("'-' is not a file")
	}
	return atomicfile.Write(path, b)
}

func (cc *configCtx) printTakesEffect(t *nvTarget) {
	fmt.Fprintf(cc.a.Stdout, "Takes effect at the next firmware reset; until then the adapter runs with its Current values.\n"+
		"  Now: 'cxray config apply -d %s' (MFRL firmware reset; interrupts traffic; where the firmware allows it).\n"+
		"  Or:  reboot after 'cxray config apply --at-reboot -d %s', or power-cycle the host.\n", t.ad.Name(), t.ad.Name())
}

func nonNilStr(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
