package manifest

import "slices"

// ConfigMap is kind "configmap": named data items that containers and
// processes take as environment variables or files.
type ConfigMap struct {
	APIVersion string                   `json:"apiVersion"`
	KindName   string                   `json:"kind"`
	Metadata   ObjectMeta               `json:"metadata"`
	Datas      map[string]ConfigMapData `json:"datas"`
}

// Kind implements Object.
func (*ConfigMap) Kind() Kind { return KindConfigMap }

// Default sets the default namespace.
func (c *ConfigMap) Default() { c.Metadata.Default() }

func (c *ConfigMap) normalize() { c.Metadata.normalize() }

// Config map data types.
const (
	ConfigDataFile  = "file"
	ConfigDataHTTP  = "http"
	ConfigDataHTTPS = "https"
	ConfigDataFTP   = "ftp"
)

// ConfigMapData is one item of a configmap: inline content (type "file",
// base64) or a remote address to fetch (types "http", "https", "ftp").
type ConfigMapData struct {
	Type    string `json:"type"`
	Content string `json:"content"`
	// RemoteUser keeps the original's capitalised spelling.
	RemoteUser   string `json:"RemoteUser,omitempty"`
	RemotePasswd string `json:"remotePasswd,omitempty"`
}

// Secret is kind "secret": named data items kept in a secret store.
type Secret struct {
	APIVersion string                `json:"apiVersion"`
	KindName   string                `json:"kind"`
	Metadata   ObjectMeta            `json:"metadata"`
	Type       string                `json:"type"`
	Datas      map[string]SecretData `json:"datas"`
}

// Kind implements Object.
func (*Secret) Kind() Kind { return KindSecret }

// Default sets the default namespace.
func (s *Secret) Default() { s.Metadata.Default() }

func (s *Secret) normalize() { s.Metadata.normalize() }

// SecretData is one item of a secret.
type SecretData struct {
	Path    string `json:"path,omitempty"`
	Content string `json:"content"`
}

// Item types of configmap and secret references.
const (
	ItemEnv  = "env"
	ItemFile = "file"
)

// ConfigMapRef injects items of a configmap (seed 000 "configmaps").
type ConfigMapRef struct {
	Name  string          `json:"name"`
	Items []ConfigMapItem `json:"items"`
}

// ConfigMapItem injects one configmap item: as the environment variable
// KeyOrPath (type env) or as the file KeyOrPath (type file).
type ConfigMapItem struct {
	Type    string `json:"type"`
	DataKey string `json:"dataKey"`
	// DataKeyAlias renames the item (Kubernetes keys cannot hold '_').
	DataKeyAlias string `json:"dataKeyAlias,omitempty"`
	// KeyOrPath is also accepted as "KeyOrPath", as the references write it.
	KeyOrPath string `json:"keyOrPath" alias:"KeyOrPath"`
	ReadOnly  bool   `json:"readOnly"`
	User      string `json:"user,omitempty"`
}

// SecretRef injects items of a secret (seed 000 "secrets").
type SecretRef struct {
	SecretName string       `json:"secretName"`
	Items      []SecretItem `json:"items"`
}

// SecretItem injects one secret item: as the environment variable
// KeyOrPath (type env) or as the file KeyOrPath (type file).
type SecretItem struct {
	Type      string `json:"type"`
	DataKey   string `json:"dataKey"`
	KeyOrPath string `json:"keyOrPath"`
	// SubPath matters on Kubernetes only.
	SubPath  string `json:"subPath,omitempty"`
	ReadOnly bool   `json:"readOnly"`
	User     string `json:"user,omitempty"`
}

// DataRefs returns the names of the configmaps and of the secrets that a
// workload manifest's containers or processes take (in its namespace),
// each once; none for other kinds.
func DataRefs(obj Object) (configMaps, secrets []string) {
	w, err := Workload(obj)
	if err != nil {
		return nil, nil
	}
	add := func(list []string, name string) []string {
		if !slices.Contains(list, name) {
			list = append(list, name)
		}
		return list
	}
	takes := func(cms []ConfigMapRef, ss []SecretRef) {
		for _, r := range cms {
			configMaps = add(configMaps, r.Name)
		}
		for _, r := range ss {
			secrets = add(secrets, r.SecretName)
		}
	}
	switch m := w.(type) {
	case *Application:
		for _, c := range m.Spec.Template.Spec.Containers {
			takes(c.ConfigMaps, c.Secrets)
		}
	case *Process:
		for _, p := range m.Spec.Template.Spec.Processes {
			takes(p.ConfigMaps, p.Secrets)
		}
	}
	return configMaps, secrets
}
