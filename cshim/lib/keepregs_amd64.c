/*
 * keepregs_amd64.c - the function hooks' miss path for code the GCC plugin
 * instrumented, as calls that keep the general registers.
 *
 * The plugin (cshim/gccplugin) emits a throttled function's fast path
 * inline and reaches the library only on a miss. Were the miss an ordinary
 * call, GCC would keep the values the function needs after it (this, an
 * index, the function's address) in callee-saved registers from the entry
 * on, and every throttled call would push and pop them. The plugin makes
 * the miss an asm statement instead:
 *
 *	lea -128(%rsp), %rsp	  step over the caller's red zone
 *	push FN			  the function's address, in any register
 *	call *hmbtrace_func_enter_keep_v1@GOTPCREL(%rip)
 *	lea 136(%rsp), %rsp
 *
 * which GCC sees clobbering memory, the flags and the registers a call may
 * clobber but for the general ones: the stubs below save those (rax, rcx,
 * rdx, rsi, rdi, r8-r11) around the library's hook (hmbtrace_func_enter_v1,
 * hmbtrace_func_exit_v1), so an instrumented leaf stays a leaf. The
 * vector, x87 and mask registers are left to GCC, as a call leaves them:
 * the psABI has no callee-saved ones, so a value in them across the miss
 * was saved by the caller before too, and saving them all here (XSAVEC,
 * tried) cost every measured call ~170 ns on this project's VM. The call
 * goes through the GOT, not the PLT, whose lazy binding may clobber r10
 * and r11.
 */

/*
 * HMB_KEEP_STUB defines name, which calls hook(fn) for the fn its caller
 * pushed, keeping the general registers. The frame: the saved rbp at
 * 0(%rbp), the return address at 8, fn at 16; the nine registers below
 * rbp; the stack aligned to 16 bytes for the call.
 */
#define HMB_KEEP_STUB(name, hook)                                      \
	__asm__(".text\n"                                              \
		".p2align 4\n"                                         \
		".globl " #name "\n"                                   \
		".type " #name ", @function\n" #name ":\n"             \
		".cfi_startproc\n"                                     \
		"endbr64\n"                                            \
		"push %rbp\n"                                          \
		".cfi_def_cfa_offset 16\n"                             \
		".cfi_offset %rbp, -16\n"                              \
		"mov %rsp, %rbp\n"                                     \
		".cfi_def_cfa_register %rbp\n"                         \
		"push %rax\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n" \
		"push %r8\n push %r9\n push %r10\n push %r11\n"        \
		"mov 16(%rbp), %rdi\n"                                 \
		"and $-16, %rsp\n"                                     \
		"call " #hook "@PLT\n"                                 \
		"lea -72(%rbp), %rsp\n"                                \
		"pop %r11\n pop %r10\n pop %r9\n pop %r8\n"            \
		"pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n pop %rax\n" \
		"pop %rbp\n"                                           \
		".cfi_def_cfa %rsp, 8\n"                               \
		"ret\n"                                                \
		".cfi_endproc\n"                                       \
		".size " #name ", .-" #name "\n")

HMB_KEEP_STUB(hmbtrace_func_enter_keep_v1, hmbtrace_func_enter_v1);
HMB_KEEP_STUB(hmbtrace_func_exit_keep_v1, hmbtrace_func_exit_v1);
