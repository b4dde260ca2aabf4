package bcsctl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Env is what a run of bcsctl reads and writes besides the API.
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	// Terminal: Out is a terminal, where rollout status draws a progress
	// bar; Width is its width in columns.
	Terminal bool
	Width    func() int
	Getenv   func(string) string
	// ReadFile reads the default token file; default os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Getwd is where the token file's search begins; default os.Getwd.
	Getwd func() (string, error)
	Now   func() time.Time
	// Poll is how often waits (rollout status, delete, drain) read the
	// state again; zero is DefaultPoll.
	Poll time.Duration
}

// DefaultPoll is how often a wait reads the state again.
const DefaultPoll = 500 * time.Millisecond

// Exit codes besides a command's own (exec passes the command's on).
const (
	exitFailure = 1 // the API refused, a rollout failed, a wait timed out
	exitUsage   = 2 // bad flags or arguments: nothing was sent
)

// usageError is a mistake in the command line; nothing was sent.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// exitError ends bcsctl with code, its message (if any) already printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit code %d", e.code) }

// Main runs bcsctl with args and returns its exit code.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Poll == 0 {
		env.Poll = DefaultPoll
	}
	if env.Width == nil {
		env.Width = func() int { return 80 }
	}
	if env.ReadFile == nil {
		env.ReadFile = os.ReadFile
	}
	if env.Getwd == nil {
		env.Getwd = os.Getwd
	}
	root := newRoot(&cli{env: env})
	root.SetArgs(args)
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.Err)
	cmd, err := root.ExecuteContextC(ctx)
	var exit *exitError
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.code
	// cobra's own word for a command it does not know.
	case errors.As(err, &usage) || strings.HasPrefix(err.Error(), "unknown command "):
		fmt.Fprintf(env.Err, "error: %v\nSee '%s --help' for usage.\n", err, cmd.CommandPath())
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitFailure
	}
	fmt.Fprintf(env.Err, "error: %v\n", err)
	return exitFailure
}

// cli is one run's settings and its API client.
type cli struct {
	env        Env
	connection connection
	namespace  string
	client     *apiClient
}

func newRoot(c *cli) *cobra.Command {
	root := &cobra.Command{
		Use:   "bcsctl",
		Short: "bcsctl controls the bcs-scheduler: apply manifests, get and describe objects, steer rollouts",
		Long: "bcsctl controls the bcs-scheduler through its REST API: apply manifests, get and describe\n" +
			"objects, follow and steer rollouts, drain agents, reach instances.\n\n" +
			"The API is --server, else $BCS_SERVER, else " + DefaultServer + "; the caller's bearer token\n" +
			"is --token, else $BCS_TOKEN, else the one in " + DefaultTokenFile + " (make run writes it) in the\n" +
			"working directory or the nearest directory above it that has one.",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return c.connect(cmd) },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.PersistentFlags().StringVar(&c.connection.server, "server", DefaultServer, "URL of the bcs-scheduler API; when not given, $BCS_SERVER if set")
	root.PersistentFlags().StringVar(&c.connection.token, "token", "", "bearer token of the API; when not given, $BCS_TOKEN, else the one in "+DefaultTokenFile+" here or above")
	root.PersistentFlags().StringVar(&c.connection.caFile, "certificate-authority", "", "PEM file of the CA that signed the API's certificate (https); default the system's")
	root.PersistentFlags().StringVar(&c.connection.clientCertFile, "client-certificate", "", "PEM client certificate that names the caller (https)")
	root.PersistentFlags().StringVar(&c.connection.clientKeyFile, "client-key", "", "PEM private key of --client-certificate")
	root.PersistentFlags().StringVarP(&c.namespace, "namespace", "n", defaultNamespace, "the namespace")
	root.AddCommand(c.applyCommand(), c.createCommand(), c.planCommand(), c.getCommand(), c.describeCommand(), c.deleteCommand(),
		c.scaleCommand(), c.rolloutCommand(), c.execCommand(), c.signalCommand(), c.logsCommand(), c.instanceCommand(), c.autoscaleCommand(), c.stopCommand(), c.startCommand(),
		c.agentCommand("cordon"), c.agentCommand("uncordon"), c.agentCommand("drain"), c.engineCommand(),
		c.eventsCommand(), c.versionCommand())
	return root
}

// connect makes the API client: --server, else $BCS_SERVER, else the
// default; --token, else $BCS_TOKEN, else the token file's found in the
// working directory or above it, if there is one.
func (c *cli) connect(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("server") {
		if env := c.env.Getenv("BCS_SERVER"); env != "" {
			c.connection.server = env
		}
	}
	conn := &c.connection
	switch {
	case cmd.Flags().Changed("token"):
		conn.source = tokenSource{from: "--token"}
	case c.env.Getenv("BCS_TOKEN") != "":
		conn.token, conn.source = c.env.Getenv("BCS_TOKEN"), tokenSource{from: "$BCS_TOKEN"}
	case !onThisMachine(conn.server):
		conn.source = tokenSource{offMachine: true}
	default:
		dir, err := c.env.Getwd()
		if err != nil {
			conn.source = tokenSource{noDir: err}
			break
		}
		var path string
		conn.token, path, conn.source.looked = findTokenFile(dir, c.env.ReadFile)
		conn.source.from = path
	}
	var err error
	c.client, err = newAPIClient(c.connection, c.env.Err)
	return err
}

// onThisMachine reports whether server is on a loopback address: only
// then is the dev token of bcs-data sent unasked, never to another host.
func onThisMachine(server string) bool {
	if !strings.Contains(server, "://") {
		server = "http://" + server
	}
	u, err := url.Parse(server)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// defaultNamespace is the namespace of a manifest that names none (seed
// 000), and so bcsctl's.
const defaultNamespace = "defaultGroup"

// args checks a command's positional arguments; a mistake is a usage
// error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err.Error()}
		}
		return nil
	}
}

// outputFlag is -o: a table (wide: with more columns), or what the
// server sent as json or yaml.
type outputFlag struct{ format string }

func (o *outputFlag) add(cmd *cobra.Command, formats ...string) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "", "output format: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	cmd.PreRunE = chain(cmd.PreRunE, func(*cobra.Command, []string) error {
		if o.format != "" && !slices.Contains(formats, o.format) {
			return usageErrorf("--output %q: want one of %s", o.format, strings.Join(formats, ", "))
		}
		return nil
	})
}

func (o *outputFlag) raw() bool { return o.format == "json" || o.format == "yaml" }

// writeOutput is the output of a command that changes something: a line
// saying what it did ("process demo/gamesvr created"), or with -o
// json|yaml what the API answered, as it answered it (nothing for an
// empty answer), YAML documents apart by "---".
type writeOutput struct {
	outputFlag
	printed int
}

func (o *writeOutput) add(cmd *cobra.Command) { o.outputFlag.add(cmd, "json", "yaml") }

// done prints the line format makes of args, or answer under -o.
func (o *writeOutput) done(w io.Writer, answer []byte, format string, args ...any) error {
	if !o.raw() {
		_, err := fmt.Fprintf(w, format+"\n", args...)
		return err
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		return nil
	}
	if o.format == "yaml" && o.printed > 0 {
		fmt.Fprintln(w, "---")
	}
	o.printed++
	return printRaw(w, o.format, answer)
}

func chain(first, then func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if first != nil {
			if err := first(cmd, args); err != nil {
				return err
			}
		}
		return then(cmd, args)
	}
}

// printRaw prints JSON as it came (json) or as YAML (yaml).
func printRaw(w io.Writer, format string, data []byte) error {
	if format == "yaml" {
		out, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		_, err = w.Write(out)
		return err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
}

func (c *cli) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print bcsctl's version and whether the API answers",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(c.env.Out, "Client: bcsctl %s\n", buildVersion())
			var leader struct {
				Leader string `json:"leader"`
			}
			if _, err := c.client.get(cmd.Context(), "/v1/leader", nil, &leader); err != nil {
				fmt.Fprintf(c.env.Out, "Server: %s: %v\n", c.client.base, err)
				return &exitError{exitFailure}
			}
			fmt.Fprintf(c.env.Out, "Server: %s (leader %s)\n", c.client.base, cmp.Or(leader.Leader, "this replica"))
			return nil
		},
	}
}

// buildVersion is the module version and VCS revision bcsctl was built
// from, as far as the build recorded them.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v + " " + info.GoVersion
}
