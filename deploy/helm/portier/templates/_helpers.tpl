{{/* Names and labels. fullname: the release name when it holds the chart's name, else release-chart. */}}
{{- define "portier.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "portier.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end -}}

{{- define "portier.labels" -}}
{{ include "portier.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "portier.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The restricted Pod Security profile, for every container. */}}
{{- define "portier.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities: { drop: ["ALL"] }
{{- end -}}

{{/* /tmp: at least config.directoryMaxBytes when a directory is downloaded (--directory-url). */}}
{{- define "portier.tmpSize" -}}
{{- if .Values.config.directoryUrl -}}
{{- $max := .Values.config.directoryMaxBytes | default 2147483648 | int64 -}}
{{- printf "%dMi" (add (div $max 1048576) 64) -}}
{{- else -}}
{{- .Values.tmpSizeLimit -}}
{{- end -}}
{{- end -}}

{{/* The portier container: the image's entrypoint, the config file, probes on the admin port. */}}
{{- define "portier.container" -}}
- name: portier
  image: {{ include "portier.image" . }}
  imagePullPolicy: {{ .Values.image.pullPolicy }}
  args: ["serve", "--config", "/etc/portier/config/portier.json"]
  {{- with .Values.env }}
  env:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  ports:
    {{- if eq .Values.mode "central" }}
    - { name: decision, containerPort: {{ .Values.config.port }}, protocol: TCP }
    {{- if .Values.config.grpcPort }}
    - { name: grpc, containerPort: {{ .Values.config.grpcPort }}, protocol: TCP }
    {{- end }}
    {{- end }}
    - { name: admin, containerPort: {{ .Values.config.adminPort }}, protocol: TCP }
  startupProbe:
    httpGet: { path: {{ if eq .Values.mode "sidecar" }}/ready{{ else }}/health{{ end }}, port: admin }
    {{- toYaml .Values.probes.startup | nindent 4 }}
  livenessProbe:
    httpGet: { path: /health, port: admin }
    {{- toYaml .Values.probes.liveness | nindent 4 }}
  readinessProbe:
    httpGet: { path: /ready, port: admin }
    {{- toYaml .Values.probes.readiness | nindent 4 }}
  resources:
    {{- toYaml .Values.resources | nindent 4 }}
  securityContext:
    {{- include "portier.containerSecurity" . | nindent 4 }}
  volumeMounts:
    - { name: config, mountPath: /etc/portier/config, readOnly: true }
    {{- if .Values.files }}
    - { name: files, mountPath: /etc/portier/files, readOnly: true }
    {{- end }}
    {{- if .Values.secretName }}
    - { name: secrets, mountPath: /etc/portier/secrets, readOnly: true }
    {{- end }}
    - { name: tmp, mountPath: /tmp }
    {{- with .Values.extraVolumeMounts }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{- define "portier.volumes" -}}
- name: config
  configMap: { name: {{ include "portier.fullname" . }}-config }
{{- if .Values.files }}
- name: files
  configMap: { name: {{ include "portier.fullname" . }}-files }
{{- end }}
{{- if .Values.secretName }}
- name: secrets
  secret: { secretName: {{ .Values.secretName }} }
{{- end }}
- name: tmp
  emptyDir: { sizeLimit: {{ include "portier.tmpSize" . }} }
{{- with .Values.extraVolumes }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Refusals: values that would render a pod that cannot work. */}}
{{- define "portier.validate" -}}
{{- if not .Values.config.adminPort -}}
{{- fail "config.adminPort: the chart probes and scrapes the admin port; set it (8182)" -}}
{{- end -}}
{{- if and (eq .Values.mode "central") (ne (toString .Values.config.host) "0.0.0.0") -}}
{{- fail "config.host: the central shape is reached through a Service; set 0.0.0.0" -}}
{{- end -}}
{{- if and (eq .Values.mode "sidecar") (ne (toString .Values.config.host) "127.0.0.1") -}}
{{- fail "config.host: the sidecar shape decides on loopback only; set 127.0.0.1" -}}
{{- end -}}
{{- if ne (toString .Values.config.adminHost) "0.0.0.0" -}}
{{- fail "config.adminHost: the kubelet probes the pod's address; set 0.0.0.0" -}}
{{- end -}}
{{- $stop := .Values.config.shutdownTimeout | default 20 | int -}}
{{- $preStop := ternary (int .Values.sidecar.gateway.preStopSeconds) 0 (eq .Values.mode "sidecar") -}}
{{- if lt (int .Values.terminationGracePeriodSeconds) (add $stop $preStop 5 | int) -}}
{{- fail (printf "terminationGracePeriodSeconds: must be at least config.shutdownTimeout + the gateway's preStop + 5 (%d)" (add $stop $preStop 5)) -}}
{{- end -}}
{{- end -}}
