apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ .Release.Name }}-kubelet-plugin
  labels:
    app.kubernetes.io/name: nvidia-dra-driver-gpu
spec:
  selector:
    matchLabels:
      app.kubernetes.io/name: nvidia-dra-driver-gpu
  template:
    metadata:
      labels:
        app.kubernetes.io/name: nvidia-dra-driver-gpu
    spec:
      nodeSelector:
        nvidia.com/gpu.present: "true"
      containers:
        - name: plugin
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
