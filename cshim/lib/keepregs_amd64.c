/*
 * keepregs_amd64.c - the function hooks' miss path for code the GCC plugin
 * instrumented, as calls that keep every register.
 *
 * The plugin (cshim/gccplugin) emits a throttled function's fast path
 * inline and reaches the library only on a miss. Were the miss an ordinary
 * call, GCC would keep the values the function needs after it (this, an
 * index, the function's address) in callee-saved registers from the entry
 * on, and every throttled call would push and pop them. The plugin makes
 * the miss an asm statement instead, which GCC sees clobbering nothing but
 * memory and the flags:
 *
 *	lea -128(%rsp), %rsp	  step over the caller's red zone
 *	push FN			  the function's address, in any register
 *	call *hmbtrace_func_enter_keep_v1@GOTPCREL(%rip)
 *	lea 136(%rsp), %rsp
 *
 * so an instrumented leaf stays a leaf. The stubs below save what the
 * psABI lets a call clobber, the general registers and the x87, SSE, AVX
 * and AVX-512 state (XSAVEC, XSAVE or FXSAVE, the best the CPU has: the
 * caller may hold vector values in any register), call the library's hook
 * (hmbtrace_func_enter_v1, hmbtrace_func_exit_v1) and restore them. That
 * costs a measured call the save, which XSAVEC keeps small where the
 * upper vector halves are unused (their components are not written); a
 * throttled call never gets here. The call goes through the GOT, not the
 * PLT, whose lazy binding may clobber r10 and r11. AMX tiles are not
 * saved, as glibc's lazy binding does not save them.
 */
#include <cpuid.h>
#include <stdint.h>

#define HMB_NOINST __attribute__((no_instrument_function))

/*
 * hmb_xsave_kind says how the stubs save the vector state (1 FXSAVE, 2
 * XSAVE, 3 XSAVEC) and hmb_xsave_size how many bytes, a multiple of 64 with
 * the XSAVE header's 64 bytes after the legacy area's 512; 0 until
 * hmb_xsave_init has run.
 */
__attribute__((visibility("hidden"))) uint8_t hmb_xsave_kind;
__attribute__((visibility("hidden"))) uint64_t hmb_xsave_size;

/* The components saved: x87, SSE, AVX, AVX-512's mask, upper and high registers (XCR0's bits 0-2, 5-7). */
#define HMB_XSAVE_MASK 0xe7u

void hmb_xsave_init(void) HMB_NOINST __attribute__((visibility("hidden")));

/*
 * hmb_xsave_init finds the CPU's best save and its size. It runs as the
 * library loads, and from a stub that finds it has not (a constructor of
 * an instrumented object that ran first), before the vector state is
 * saved: hence general registers only.
 */
__attribute__((constructor, target("general-regs-only"))) void hmb_xsave_init(void)
{
	unsigned a, b, c, d;
	uint8_t kind = 1;
	uint64_t size = 576;
	if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && __get_cpuid_max(0, 0) >= 0xd) {
		unsigned lo, hi;
		__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
		unsigned mask = lo & HMB_XSAVE_MASK;
		/* The compacted form's size (XSAVEC) and the standard form's (XSAVE), of mask's components alone. */
		uint64_t compact = 576, standard = 576;
		for (int i = 2; i < 8; i++) {
			if (!(mask & (1u << i))) {
				continue;
			}
			__cpuid_count(0xd, i, a, b, c, d);
			if (c & 2) {
				compact = (compact + 63) & ~(uint64_t)63;
			}
			compact += a;
			if (b + a > standard) {
				standard = b + a;
			}
		}
		__cpuid_count(0xd, 1, a, b, c, d);
		if (a & 2) {
			kind = 3, size = compact;
		} else {
			kind = 2, size = standard;
		}
	}
	__atomic_store_n(&hmb_xsave_kind, kind, __ATOMIC_RELAXED);
	__atomic_store_n(&hmb_xsave_size, (size + 63) & ~(uint64_t)63, __ATOMIC_RELEASE);
}

/*
 * HMB_KEEP_STUB defines name, which calls hook(fn) for the fn its caller
 * pushed, keeping every register but the flags. The frame: the saved rbp
 * at 0(%rbp), the return address at 8, fn at 16; the nine general
 * registers below rbp, then the vector state, 64-byte aligned.
 */
#define HMB_KEEP_STUB(name, hook)                                                                          \
	__asm__(".text\n"                                                                                  \
		".p2align 4\n"                                                                             \
		".globl " #name "\n"                                                                       \
		".type " #name ", @function\n" #name ":\n"                                                 \
		".cfi_startproc\n"                                                                         \
		"endbr64\n"                                                                                \
		"push %rbp\n"                                                                              \
		".cfi_def_cfa_offset 16\n"                                                                 \
		".cfi_offset %rbp, -16\n"                                                                  \
		"mov %rsp, %rbp\n"                                                                         \
		".cfi_def_cfa_register %rbp\n"                                                             \
		"push %rax\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n"                              \
		"push %r8\n push %r9\n push %r10\n push %r11\n"                                            \
		"1: mov hmb_xsave_size(%rip), %rcx\n"                                                      \
		"test %rcx, %rcx\n"                                                                        \
		"jz 5f\n"                                                                                  \
		"and $-64, %rsp\n"                                                                         \
		"sub %rcx, %rsp\n"                                                                         \
		"xor %edx, %edx\n"                                                                         \
		"mov %rdx, 512(%rsp)\n mov %rdx, 520(%rsp)\n mov %rdx, 528(%rsp)\n mov %rdx, 536(%rsp)\n"  \
		"mov %rdx, 544(%rsp)\n mov %rdx, 552(%rsp)\n mov %rdx, 560(%rsp)\n mov %rdx, 568(%rsp)\n"  \
		"mov $0xe7, %eax\n"                                                                        \
		"movzbl hmb_xsave_kind(%rip), %ecx\n"                                                      \
		"cmp $3, %ecx\n jne 2f\n xsavec64 (%rsp)\n jmp 4f\n"                                         \
		"2: cmp $2, %ecx\n jne 3f\n xsave64 (%rsp)\n jmp 4f\n"                                       \
		"3: fxsave64 (%rsp)\n"                                                                       \
		"4: mov 16(%rbp), %rdi\n"                                                                  \
		"call " #hook "@PLT\n"                                                                     \
		"xor %edx, %edx\n"                                                                         \
		"mov $0xe7, %eax\n"                                                                        \
		"cmpb $1, hmb_xsave_kind(%rip)\n je 6f\n xrstor64 (%rsp)\n jmp 7f\n"                         \
		"6: fxrstor64 (%rsp)\n"                                                                      \
		"7: lea -72(%rbp), %rsp\n"                                                                 \
		"pop %r11\n pop %r10\n pop %r9\n pop %r8\n"                                                \
		"pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n pop %rax\n"                                   \
		".cfi_remember_state\n"                                                                    \
		"pop %rbp\n"                                                                               \
		".cfi_def_cfa %rsp, 8\n"                                                                   \
		"ret\n"                                                                                    \
		".cfi_restore_state\n"                                                                     \
		"5: and $-16, %rsp\n"                                                                      \
		"call hmb_xsave_init@PLT\n"                                                                \
		"lea -72(%rbp), %rsp\n"                                                                    \
		"jmp 1b\n"                                                                                 \
		".cfi_endproc\n"                                                                           \
		".size " #name ", .-" #name "\n")

HMB_KEEP_STUB(hmbtrace_func_enter_keep_v1, hmbtrace_func_enter_v1);
HMB_KEEP_STUB(hmbtrace_func_exit_keep_v1, hmbtrace_func_exit_v1);
