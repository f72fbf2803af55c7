package nvconf

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// EnvBackupDir is where set, reset and restore write their backups.
const EnvBackupDir = "CXRAY_BACKUP_DIR"

// BackupDir is where automatic backups go: $CXRAY_BACKUP_DIR, else
// $XDG_STATE_HOME/cxray/backups, else ~/.local/state/cxray/backups.
func BackupDir() (string, error) {
	if d := os.Getenv(EnvBackupDir); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "cxray", "backups"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no place for the NV backup (%v); give one with --backup FILE or $%s", err, EnvBackupDir)
	}
	return filepath.Join(home, ".local", "state", "cxray", "backups"), nil
}

// BackupPath is a new backup file's name for device, in dir.
func BackupPath(dir, device string, t time.Time) string {
	name := strings.NewReplacer("/", "_", ":", "_", "@", "_").Replace(device)
	return filepath.Join(dir, fmt.Sprintf("%s-%s.nvbackup", name, t.UTC().Format("20060102T150405.000000000Z")))
}

// BackupTLVs reads what a backup before a write holds: the whole NV area
// (MNVGN), or, when the firmware cannot list it, the TLVs about to change
// (partial is then set).
func (s *Session) BackupTLVs(ctx context.Context, changing []Instance) (tlvs []RawTLV, partial bool, err error) {
	tlvs, err = s.Walk(ctx)
	if err == nil {
		return tlvs, false, nil
	}
	var nv *NVError
	if !errors.As(err, &nv) {
		return nil, false, err
	}
	tlvs = nil
	for _, in := range changing {
		it, err := s.Read(ctx, in, ModeNext)
		if err != nil {
			return nil, true, fmt.Errorf("backup before writing: %w; nothing was written", err)
		}
		tlvs = append(tlvs, RawTLV{Header: Header{Type: in.Type(), Version: it.Header.Version, WriterID: it.Header.WriterID}, Data: it.Data})
	}
	return tlvs, true, nil
}
