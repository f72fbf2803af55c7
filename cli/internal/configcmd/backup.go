package configcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/cxray/cxray/cli/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/cxray/cxray/nvconf"
	"github.com/cxray/cxray/nvconf/rawfile"
)

// backupDoc is `config backup -o json`: the file written and the TLVs in it.
type backupDoc struct {
	Device string   `json:"device"`
	File   string   `json:"file"`
	Format string   `json:"format"`
	TLVs   []string `json:"tlvs"`
}

type configBackupOptions struct {
	df     cmdutil.DeviceFlags
	format string
}

func (cc *configCtx) backupCmd() *cobra.Command { return cc.newBackupCmd(nil) }

// newBackupCmd wires the flags to configBackupOptions; runF (tests) replaces runBackup.
func (cc *configCtx) newBackupCmd(runF func(*configBackupOptions, []string) error) *cobra.Command {
	var o configBackupOptions
	c := &cobra.Command{
		Use:   "backup FILE",
		Short: "Save the stored NV configuration (MNVGN walk) to FILE ('-' for stdout)",
		Long: `Save every TLV stored in the adapter's NV configuration area, as 'mstconfig
backup' does. --format cxray (default) writes cxray's readable format (each
TLV's bytes plus its parameters decoded as comments); --format raw writes
mstflint's MLNX_RAW_TLV_FILE format, which 'mstconfig set_raw' reads, with two
'%' comments mstconfig skips: a marker after the signature and an end line with
the TLV count and a checksum, so a copy cut short is refused. Both restore with
'cxray config restore'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if runF != nil {
				return runF(&o, args)
			}
			return cc.runBackup(cc.a.Ctx, &o, args[0])
		},
	}
	o.df.Add(c)
	c.Flags().StringVar(&o.format, "format", "cxray", "file format: cxray (readable) or raw (mstflint's MLNX_RAW_TLV_FILE)")
	return c
}

func (cc *configCtx) runBackup(ctx context.Context, o *configBackupOptions, file string) error {
	if o.format != "cxray" && o.format != "raw" {
		return cmdutil.UsageErr("--format %s: the formats are cxray and raw", o.format)
	}
	ctx, cancel := o.df.Context(ctx)
	defer cancel()
	t, err := cc.open(ctx, o.df)
	if err != nil {
		return err
	}
	defer t.Close()
	tlvs, err := t.s.Walk(ctx)
	if err != nil {
		return cmdutil.Classify(err)
	}
	var b []byte
	if o.format == "raw" {
		if b, err = rawfile.Write(tlvs, t.s.HeaderCodec()); err != nil {
			return cmdutil.Classify(err)
		}
	} else {
		b = nvconf.WriteBackup(tlvs, t.nv, t.s.HeaderCodec(), cc.backupInfo(ctx, t))
	}
	if file == "-" {
		_, err := cc.a.Stdout.Write(b)
		return err
	}
	if err := writeFileAtomic(file, b); err != nil {
		return cmdutil.UsageErr("cannot write %s: %v", file, err)
	}
	if cc.a.JSON() {
		var names []string
		for _, r := range tlvs {
			names = append(names, t.nv.DescribeType(r.Header.Type))
		}
		return cc.a.WriteJSON(backupDoc{Device: t.ad.Name(), File: file, Format: o.format, TLVs: nonNilStr(names)})
	}
	if len(tlvs) == 0 {
		fmt.Fprintf(cc.a.Stdout, "The NV configuration area is empty (everything has its default); wrote an empty backup to %s.\n", file)
		return nil
	}
	fmt.Fprintf(cc.a.Stdout, "Saved %d TLV(s) to %s (%s format).\n", len(tlvs), file, o.format)
	return nil
}

// readTLVFile reads a backup in either format.
func readTLVFile(path string, hc *nvconf.HeaderCodec, nv *nvconf.DB, stdin io.Reader) ([]nvconf.RawTLV, error) {
	b, err := readBackup(path, hc, nv, stdin)
	if err != nil {
		return nil, err
	}
	return b.TLVs, nil
}
