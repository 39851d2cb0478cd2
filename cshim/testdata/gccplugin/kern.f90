! kern: a module whose small function sq is called in work's hot loop,
! where the compiler inlines it. afterinline.f90 calls work from another
! file, so work is never inlined: it is a region, sq is not.
module kern
  implicit none
contains
  pure real(8) function sq(x)
    real(8), intent(in) :: x
    sq = x * x
  end function sq

  subroutine work(a, s)
    real(8), intent(in) :: a(:)
    real(8), intent(out) :: s
    integer :: i
    s = 0
    do i = 1, size(a)
      s = s + sq(a(i))
    end do
  end subroutine work
end module kern
