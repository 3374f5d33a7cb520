{{- define "jobbie.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "jobbie.labels" -}}
app.kubernetes.io/name: jobbie
app.kubernetes.io/instance: {{ .Release.Name }}
{{ include "jobbie.chartLabels" . }}
{{- end -}}

{{- define "jobbie.chartLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component; ctx: (dict "root" $ "component" "shard" "shard" "s1") */}}
{{- define "jobbie.selector" -}}
app.kubernetes.io/name: jobbie
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- with .shard }}
jobbie.io/shard: {{ . }}
{{- end }}
{{- end -}}

{{- define "jobbie.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "jobbie.caSecret" -}}
{{- .Values.pki.existingSecret | default (printf "%s-ca" (include "jobbie.fullname" .)) -}}
{{- end -}}

{{- define "jobbie.gossipSecret" -}}
{{- .Values.gossip.existingSecret | default (printf "%s-gossip" (include "jobbie.fullname" .)) -}}
{{- end -}}

{{- define "jobbie.controlHeadless" -}}
{{ include "jobbie.fullname" . }}-control-headless
{{- end -}}

{{- define "jobbie.controlURL" -}}
{{- if .Values.control.url -}}
{{ .Values.control.url }}
{{- else if .Values.control.enabled -}}
https://{{ include "jobbie.fullname" . }}-control.$(POD_NAMESPACE).svc:{{ .Values.control.ports.http }}
{{- else -}}
{{ fail "control.url is required when control.enabled is false" }}
{{- end -}}
{{- end -}}

{{/* The gossip peers every process joins: control's pods (when here). */}}
{{- define "jobbie.controlJoin" -}}
{{- if .Values.control.enabled -}}
dns:{{ include "jobbie.controlHeadless" . }}:{{ .Values.control.ports.gossip }}
{{- end -}}
{{- end -}}

{{- define "jobbie.env" -}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
{{- end -}}

{{/* The flags every process with a CA-issued certificate takes. */}}
{{- define "jobbie.tlsArgs" -}}
- --tls-cert=/etc/jobbie/tls/node.crt
- --tls-key=/etc/jobbie/tls/node.key
- --tls-ca=/etc/jobbie/ca/ca.crt
{{- end -}}

{{/* jobbie-pod's flags for the same certificate (probes, bootstrap check). */}}
{{- define "jobbie.podTLS" -}}
- --cert=/etc/jobbie/tls/node.crt
- --key=/etc/jobbie/tls/node.key
- --ca=/etc/jobbie/ca/ca.crt
{{- end -}}

{{/*
The init container that issues the pod its certificate. ctx: dict root,
role, shard (or ""), hosts (DNS names or addresses the certificate also
names).
*/}}
{{- define "jobbie.certsInit" -}}
- name: certs
  image: {{ include "jobbie.image" .root }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  command:
    - /jobbie
    - certs
    - issue
    - --ca-dir=/etc/jobbie/ca-issuer
    - --role={{ .role }}
    {{- with .shard }}
    - --shard={{ . }}
    {{- end }}
    - --node=$(POD_NAME)
    {{- range .hosts }}
    - --host={{ . }}
    {{- end }}
    - --host=$(POD_IP)
    - --valid-for={{ .root.Values.pki.validFor }}
    - --out=/etc/jobbie/tls/node
  env:
    {{- include "jobbie.env" .root | nindent 4 }}
  securityContext:
    {{- toYaml .root.Values.securityContext | nindent 4 }}
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 64Mi}
  volumeMounts:
    - {name: ca-issuer, mountPath: /etc/jobbie/ca-issuer, readOnly: true}
    - {name: tls, mountPath: /etc/jobbie/tls}
{{- end -}}

{{/* Volumes for a CA-issued certificate and the gossip key. */}}
{{- define "jobbie.pkiVolumes" -}}
- name: ca-issuer
  secret:
    secretName: {{ include "jobbie.caSecret" . }}
    defaultMode: 0440
- name: ca
  secret:
    secretName: {{ include "jobbie.caSecret" . }}
    items: [{key: ca.crt, path: ca.crt}]
- name: tls
  emptyDir: {medium: Memory, sizeLimit: 1Mi}
{{- end -}}

{{- define "jobbie.pkiMounts" -}}
- {name: ca, mountPath: /etc/jobbie/ca, readOnly: true}
- {name: tls, mountPath: /etc/jobbie/tls, readOnly: true}
{{- end -}}

{{- define "jobbie.gossipVolume" -}}
- name: gossip
  secret:
    secretName: {{ include "jobbie.gossipSecret" . }}
    defaultMode: 0440
{{- end -}}

{{- define "jobbie.podSpecCommon" -}}
automountServiceAccountToken: false
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
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

{{/* Spread a group's pods over nodes, so one node's loss costs one vote. */}}
{{- define "jobbie.spread" -}}
topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "jobbie.selector" . | nindent 8 }}
{{- end -}}

{{/* Accepting self-hosted shards: their CA's Secret (ca.crt and ca.key). */}}
{{- define "jobbie.selfHostedCASecret" -}}
{{- .Values.selfHostedShards.ca.existingSecret | default (printf "%s-selfhosted-ca" (include "jobbie.fullname" .)) -}}
{{- end -}}

{{/* This release is a self-hosted shard: the hosted CA's Secret (ca.crt). */}}
{{- define "jobbie.hostedCASecret" -}}
{{- .Values.selfHosted.hostedCA.existingSecret | default (printf "%s-hosted-ca" (include "jobbie.fullname" .)) -}}
{{- end -}}

{{- define "jobbie.joinTokenSecret" -}}
{{- .Values.selfHosted.existingSecret | default (printf "%s-join-token" (include "jobbie.fullname" .)) -}}
{{- end -}}

{{/* jobbie-pod's flags for a self-hosted node's certificate, which joining stored in its data directory. */}}
{{- define "jobbie.selfHostedPodTLS" -}}
- --cert=/var/lib/jobbie/data/selfhosted/node.crt
- --key=/var/lib/jobbie/data/selfhosted/node.key
- --ca=/var/lib/jobbie/data/selfhosted/ca.crt
{{- end -}}

{{/*
A Service that passes TCP through to a component's port (mutual TLS end
to end). ctx: dict root, name, component, svc (type, port, nodePort,
annotations, loadBalancerSourceRanges, externalTrafficPolicy), target
(the container port's name).
*/}}
{{- define "jobbie.passThroughService" -}}
{{- $s := .svc -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ .name }}
  labels:
    {{- include "jobbie.labels" .root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  {{- with $s.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $s.type }}
  {{- if and (ne $s.type "ClusterIP") $s.externalTrafficPolicy }}
  externalTrafficPolicy: {{ $s.externalTrafficPolicy }}
  {{- end }}
  {{- if eq $s.type "LoadBalancer" }}
  {{- with $s.loadBalancerSourceRanges }}
  loadBalancerSourceRanges:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- end }}
  selector:
    {{- include "jobbie.selector" (dict "root" .root "component" .component) | nindent 4 }}
  ports:
    - name: {{ .target }}
      protocol: TCP
      port: {{ $s.port }}
      targetPort: {{ .target }}
      {{- if and (ne $s.type "ClusterIP") $s.nodePort }}
      nodePort: {{ $s.nodePort }}
      {{- end }}
{{- end -}}
