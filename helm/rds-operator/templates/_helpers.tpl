{{- define "rds-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rds-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "rds-operator.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rds-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rds-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rds-operator.labels" -}}
{{ include "rds-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "rds-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ default .Chart.AppVersion .Values.image.tag }}
{{- end -}}
{{- end -}}

{{- define "rds-operator.serviceAccountName" -}}
{{- default (include "rds-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* What the operator does with the API: the same rules for a ClusterRole or per-namespace Roles. */}}
{{- define "rds-operator.rules" -}}
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances", "dbsubnetgroups", "dbparametergroups", "dbclusters", "dbclusterparametergroups", "dbsnapshots", "dbclustersnapshots", "globalclusters", "optiongroups"]
  verbs: ["get", "list", "watch", "patch"]
# An expired clone (DBCluster expireAfter) and its member DBInstances: deleted, nothing else.
- apiGroups: ["rds.operator.rs"]
  resources: ["dbclusters", "dbinstances"]
  verbs: ["delete"]
# No kind reads a DBClusterEndpoint, a DBProxy or a DBUser by name: no get.
- apiGroups: ["rds.operator.rs"]
  resources: ["dbclusterendpoints", "dbproxies", "dbusers", "eventsubscriptions", "integrations", "dbshardgroups"]
  verbs: ["list", "watch", "patch"]
# Status is written by server-side apply; it is read with the object, never on its own.
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances/status", "dbsubnetgroups/status", "dbparametergroups/status", "dbclusters/status", "dbclusterparametergroups/status", "dbsnapshots/status", "dbclustersnapshots/status", "globalclusters/status", "dbclusterendpoints/status", "optiongroups/status", "dbproxies/status", "dbusers/status", "eventsubscriptions/status", "integrations/status", "dbshardgroups/status"]
  verbs: ["patch"]
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances/finalizers", "dbsubnetgroups/finalizers", "dbparametergroups/finalizers", "dbclusters/finalizers", "dbclusterparametergroups/finalizers", "dbsnapshots/finalizers", "dbclustersnapshots/finalizers", "globalclusters/finalizers", "dbclusterendpoints/finalizers", "optiongroups/finalizers", "dbproxies/finalizers", "dbusers/finalizers", "eventsubscriptions/finalizers", "integrations/finalizers", "dbshardgroups/finalizers"]
  verbs: ["update"]
# Password Secrets (read), generated password and connection Secrets (written, owned). No
# delete: an owned Secret carries its owner's ownerReference, and the garbage collector deletes
# it with its owner.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- if and .Values.rollSecretReaders .Values.watchNamespaces }}
# The readers of a connection Secret (rollSecretReaders): listed when its data changes, and their
# pod template annotated with its version. Here in the namespaced Roles only; for every namespace
# watched, rolling-readers.yaml grants it in rollSecretReadersNamespaces alone.
{{ include "rds-operator.rolling-rule" . }}
{{- end }}
{{- end -}}

{{- define "rds-operator.rolling-rule" -}}
- apiGroups: ["apps"]
  resources: ["deployments", "statefulsets", "daemonsets"]
  verbs: ["list", "patch"]
{{- end -}}
