{{- define "rds-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "rds-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rds-operator.labels" -}}
{{ include "rds-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "rds-operator.serviceAccountName" -}}
{{- default (include "rds-operator.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* What the operator does with the API: the same rules for a ClusterRole or per-namespace Roles. */}}
{{- define "rds-operator.rules" -}}
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances", "dbsubnetgroups", "dbparametergroups"]
  verbs: ["get", "list", "watch", "patch"]
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances/status", "dbsubnetgroups/status", "dbparametergroups/status"]
  verbs: ["get", "patch"]
- apiGroups: ["rds.operator.rs"]
  resources: ["dbinstances/finalizers", "dbsubnetgroups/finalizers", "dbparametergroups/finalizers"]
  verbs: ["update"]
# Password Secrets (read), generated password and connection Secrets (written, owned).
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}
