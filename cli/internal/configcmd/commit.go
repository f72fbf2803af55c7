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

// commit asks (unless yes), then has nvconf commit the plan: lock,
// replan, backup, journal, write, verify. It returns the plan as
// performed and the backup's path.
func (cc *configCtx) commit(ctx context.Context, t *nvTarget, question string, p nvconf.Plan, yes bool, backupPath string) (nvconf.Plan, string, error) {
	if err := cc.a.Ask(yes, question, "nothing written"); err != nil {
		return nil, "", err
	}
	final, path, err := nvconf.Commit(ctx, t.s, p, nvconf.CommitOptions{
		Key: t.key(), Device: t.ad.Name(), Confirmed: !yes,
		Backup: nvconf.BackupOptions{Path: backupPath, Info: cc.backupInfo(ctx, t), Tool: cc.a.Version},
	})
	var be *nvconf.BackupError
	if errors.As(err, &be) {
		return nil, "", cmdutil.UsageWrap(err)
	}
	return final, path, cmdutil.Classify(err)
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
