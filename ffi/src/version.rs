//! The library's version.

use std::ffi::c_char;

/// Major version of the header (compare with `ndjit_version_number()` at run time to detect a
/// header/library mismatch).
pub const NDJIT_VERSION_MAJOR: u32 = 0;
/// Minor version of the header.
pub const NDJIT_VERSION_MINOR: u32 = 1;
/// Patch version of the header.
pub const NDJIT_VERSION_PATCH: u32 = 0;

/// The version of the loaded library as `"MAJOR.MINOR.PATCH"`, e.g. `"0.1.0"`. The string is
/// static: never free it. Thread-safe.
#[no_mangle]
pub extern "C" fn ndjit_version() -> *const c_char {
    const V: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    V.as_ptr().cast()
}

/// The version of the loaded library as one number, `MAJOR * 10000 + MINOR * 100 + PATCH`
/// (e.g. 100 for 0.1.0), to compare with the header's `NDJIT_VERSION_*`. Thread-safe.
#[no_mangle]
pub extern "C" fn ndjit_version_number() -> u32 {
    NDJIT_VERSION_MAJOR * 10000 + NDJIT_VERSION_MINOR * 100 + NDJIT_VERSION_PATCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_the_package_version() {
        let parts: Vec<u32> = env!("CARGO_PKG_VERSION")
            .split('.')
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(
            parts,
            [
                NDJIT_VERSION_MAJOR,
                NDJIT_VERSION_MINOR,
                NDJIT_VERSION_PATCH
            ]
        );
        let s = unsafe { std::ffi::CStr::from_ptr(ndjit_version()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
