"""Going faster: every LayerNorm / RMSNorm provider side by side (the fast kernels, the chapters'
teaching kernels, PyTorch eager, torch.compile and Liger-Kernel), measured in one run."""
