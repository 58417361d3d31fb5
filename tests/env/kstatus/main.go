// kstatus prints what Flux (kustomize-controller's health checks, `wait: true`) and
// `kubectl wait`-style tools built on sigs.k8s.io/cli-utils read from an object: its kstatus
// status and message. It reads one JSON object on stdin and writes "<status>\n<message>".
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	// Decoded as the API machinery does (whole numbers as int64), as Flux sees objects.
	object, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, nil)
	if err != nil {
		fail(err)
	}
	result, err := status.Compute(object.(runtime.Unstructured).(*unstructured.Unstructured))
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s\n%s", result.Status, result.Message)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus:", err)
	os.Exit(1)
}
