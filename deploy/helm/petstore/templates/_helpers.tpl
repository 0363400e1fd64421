{{/* The release's name, cut to the 63 characters of a DNS label with room for a suffix. */}}
{{- define "petstore.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "petstore.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "petstore.labels" -}}
{{ include "petstore.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* Every process's environment: the plain settings, then the Secret's. */}}
{{- define "petstore.env" -}}
{{- range $name, $value := .Values.config }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- end -}}

{{- define "petstore.envFrom" -}}
- secretRef:
    name: {{ required "existingSecret: the Secret with SECRET_KEY, DATABASE_URL, REDIS_URL, CELERY_BROKER_URL" .Values.existingSecret }}
{{- end -}}

{{/* The sealing key as files, for the edge and the certificates worker only. */}}
{{- define "petstore.keyEnv" -}}
- name: DOMAINS_KEY_ENCRYPTION_KEY_FILE
  value: /run/petstore-keys/current
- name: DOMAINS_KEY_ENCRYPTION_KEY_PREVIOUS_FILE
  value: /run/petstore-keys/previous
{{- end -}}

{{- define "petstore.keyVolume" -}}
- name: keys
  secret:
    secretName: {{ required "keySecret: the Secret with the sealing key (current, previous)" .Values.keySecret }}
    defaultMode: 0400
{{- end -}}

{{- define "petstore.keyMount" -}}
- name: keys
  mountPath: /run/petstore-keys
  readOnly: true
{{- end -}}

{{/* What every pod shares: the image, its user, its placement. */}}
{{- define "petstore.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
automountServiceAccountToken: false
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "petstore.image" -}}
image: {{ printf "%s:%s" .Values.image.repository .Values.image.tag | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
{{- end -}}
