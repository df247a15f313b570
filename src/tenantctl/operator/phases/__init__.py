"""One tenant's lifecycle over the door: observe, apply, bootstrap, reconcile, tear down, and the status they build.

May import `operator.kube` and `operator.config`, never kopf or the runtime (the handlers pass in a Recorder).
"""
