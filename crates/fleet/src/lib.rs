//! The fleet layer of DESIGN.md: running touchstone on many hosts through
//! OpenSSH and Slurm and bringing the results home. It drives the real
//! `ssh`, `scp`, `srun` and `sbatch` commands a farm already has; there is no
//! agent of ours on the hosts and no protocol beyond the JSON result
//! documents `import` already reads.

pub mod glibc;
pub mod slurm;
