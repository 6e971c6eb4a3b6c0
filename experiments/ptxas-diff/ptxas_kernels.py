# ptxas -v of one .cu of tree TREE (its src/ and include/ as include roots) with the flags of this
# checkout's build/ (gpsm_apps target): prints each entry function with stack/spill/registers.
# Usage: python3 ptxas_kernels.py TREE SRC_RELATIVE_TO_src
import os, re, subprocess, sys

T, src = sys.argv[1], sys.argv[2]
root=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
d=root+'/build/src/CMakeFiles/gpsm_apps.dir'
fl=open(d+'/flags.make').read()
g=lambda k: re.search(k+r' = (.*)',fl).group(1)
cmd=f"/usr/local/cuda/bin/nvcc {g('CUDA_DEFINES')} -I{T}/src -I{T}/include -I{root}/build/generated -I{T}/src/scope/include -isystem={root}/.deps/fmt/include -isystem={root}/.deps/json/include -isystem={root}/.deps/cli11/include {g('CUDA_FLAGS')} -Xptxas -v -c {T}/src/{src} -o /tmp/ptxas_kernels.o"
out=subprocess.run(cmd,shell=True,capture_output=True,text=True,cwd=root+'/build/src').stderr
cur=None; props={}
for line in out.splitlines():
    m=re.search(r"Compiling entry function '(\S+)'",line)
    if m: cur=m.group(1); continue
    m=re.search(r"Function properties for (\S+)",line)
    if m: fn=m.group(1); continue
    m=re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores",line)
    if m and cur and fn==cur: props[cur]=[m.group(1),m.group(2),None]
    m=re.search(r"Used (\d+) registers",line)
    if m and cur in props and props[cur][2] is None: props[cur][2]=m.group(1)
for k,v in sorted(props.items()): print(k,'/'.join(map(str,v)))
if not props: print(out[-2000:])
