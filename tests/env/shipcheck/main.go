// shipcheck checks what the operator ships for others' tools, with those tools' own libraries:
//
//	shipcheck dashboard FILE   the Grafana dashboard, decoded strictly by Grafana's Foundation SDK
//	                           (every field known to the dashboard schema, every panel's options
//	                           to its plugin's), validated, at the SDK's schema version
//	shipcheck bundle DIR       the OLM bundle, with operator-framework's validators: the ones
//	                           `operator-sdk bundle validate` always runs and those of its
//	                           `--select-optional suite=operatorframework` (OperatorHub, good
//	                           practices, deprecated APIs for k8s-version 1.36), warnings failing
//	                           too, and the bundle's metadata/annotations.yaml
//
// It prints each problem and exits 1 when there is one.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 3 {
		fail("usage: shipcheck dashboard FILE | shipcheck bundle DIR")
	}
	switch os.Args[1] {
	case "dashboard":
		checkDashboard(os.Args[2])
	case "bundle":
		checkBundle(os.Args[2])
	default:
		fail("unknown check " + os.Args[1])
	}
	fmt.Println("ok")
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}

// problem: an error that says something (the SDK answers an empty cog.BuildErrors, typed, for
// none).
func problem(err error) bool {
	var errs cog.BuildErrors
	if errors.As(err, &errs) {
		return len(errs) > 0
	}
	return err != nil
}

func checkDashboard(path string) {
	plugins.RegisterDefaultPlugins()
	raw, err := os.ReadFile(path)
	if err != nil {
		fail(err.Error())
	}
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(raw); problem(err) {
		fail("the dashboard does not decode strictly: " + err.Error())
	}
	if err := d.Validate(); problem(err) {
		fail("the dashboard is not valid: " + err.Error())
	}
	want := dashboard.NewDashboard().SchemaVersion
	if d.SchemaVersion != want {
		fail(fmt.Sprintf("schemaVersion %d, Grafana's is %d", d.SchemaVersion, want))
	}
	if len(d.Panels) == 0 {
		fail("the dashboard has no panels")
	}
}

// The annotations a registry+v1 bundle's metadata/annotations.yaml must have
// (operator-registry's docs/design/operator-bundle.md).
var bundleAnnotations = []string{
	"operators.operatorframework.io.bundle.mediatype.v1",
	"operators.operatorframework.io.bundle.manifests.v1",
	"operators.operatorframework.io.bundle.metadata.v1",
	"operators.operatorframework.io.bundle.package.v1",
	"operators.operatorframework.io.bundle.channels.v1",
}

func checkBundle(dir string) {
	raw, err := os.ReadFile(dir + "/metadata/annotations.yaml")
	if err != nil {
		fail(err.Error())
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.UnmarshalStrict(raw, &meta); err != nil {
		fail("metadata/annotations.yaml: " + err.Error())
	}
	problems := 0
	for _, key := range bundleAnnotations {
		if meta.Annotations[key] == "" {
			fmt.Println("metadata/annotations.yaml has no " + key)
			problems++
		}
	}
	if meta.Annotations[bundleAnnotations[0]] != "registry+v1" {
		fmt.Println("the bundle's media type is not registry+v1")
		problems++
	}
	bundle, err := manifests.GetBundleFromDir(dir + "/manifests")
	if err != nil {
		fail("the bundle does not load: " + err.Error())
	}
	objs := bundle.ObjectsToValidate()
	for _, obj := range bundle.Objects {
		objs = append(objs, obj)
	}
	objs = append(objs, map[string]string{"k8s-version": "1.36"})
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.ObjectValidator,
	)
	for _, result := range validators.Validate(objs...) {
		for _, e := range result.Errors {
			fmt.Printf("error: %s: %s\n", result.Name, e.Error())
			problems++
		}
		for _, w := range result.Warnings {
			if accepted(w.Error()) {
				continue
			}
			fmt.Printf("warning: %s: %s\n", result.Name, w.Error())
			problems++
		}
	}
	if problems > 0 {
		fail(fmt.Sprintf("%d problems with the bundle", problems))
	}
}

// accepted: the one warning that is wrong here. The deprecated-APIs validator flags any RBAC rule
// for events.k8s.io's events as the Event v1beta1 removed in 1.25 (removed_apis.go keys rules on
// group and resource only); the operator writes events.k8s.io/v1 Events (kube-rs's Recorder).
func accepted(warning string) bool {
	return strings.Contains(warning, "Migrate the API(s) for events") &&
		strings.Contains(warning, "removed in v1.25")
}
