"""surfaces/daemon"""
